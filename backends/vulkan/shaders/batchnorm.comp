#version 450
// Inference BatchNorm: y = (x - mean) / sqrt(var + eps) * scale + bias, the
// channel of element i being (i / inner) % C. p: 0 n, 1 C, 2 inner, 3 eps.
// Bindings: 1 X, 2 scale, 3 bias, 4 mean, 5 var, 6 Y.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer S { ST sc[]; };
layout(std430, binding = 3) readonly buffer Bi { ST bi[]; };
layout(std430, binding = 4) readonly buffer Mu { ST mu[]; };
layout(std430, binding = 5) readonly buffer Va { ST va[]; };
layout(std430, binding = 6) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint c = (i / uint(p[2])) % uint(p[1]);
  float inv = 1.0 / sqrt(float(va[pc.off[4] + c]) + pf(3));
  float r = (float(x[pc.off[0] + i]) - float(mu[pc.off[3] + c])) * inv * float(sc[pc.off[1] + c]) +
            float(bi[pc.off[2] + c]);
  y[pc.off[5] + i] = ST(r);
}
