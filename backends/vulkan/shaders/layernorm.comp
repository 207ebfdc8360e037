#version 450
// LayerNorm over the trailing L elements: a workgroup per row; mean, then
// the variance of the deviations (two passes, f32, no cancellation).
// RMSNorm (p[4] = 1) is the same with the mean taken as 0: one pass of
// squares, no bias.
// p: 0 rows, 1 L, 2 eps bits, 3 has_bias, 4 rms. Bindings: 1 X, 2 scale,
// 3 bias (X when absent), 4 Y.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer S { ST sc[]; };
layout(std430, binding = 3) readonly buffer Bi { ST bi[]; };
layout(std430, binding = 4) writeonly buffer Y { ST y[]; };
shared float red[64];

float reduce_sum(float v) {
  uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}

void main() {
  uint row = linear_group();
  if (row >= uint(p[0])) return;
  uint L = uint(p[1]), t = gl_LocalInvocationID.x;
  uint base = pc.off[0] + row * L;
  float mean = 0.0;
  if (p[4] == 0) {
    float s = 0.0;
    for (uint j = t; j < L; j += 64u) s += float(x[base + j]);
    mean = reduce_sum(s) / float(L);
  }
  float q = 0.0;
  for (uint j = t; j < L; j += 64u) {
    float d = float(x[base + j]) - mean;
    q += d * d;
  }
  float inv = 1.0 / sqrt(reduce_sum(q) / float(L) + pf(2));
  for (uint j = t; j < L; j += 64u) {
    float r = (float(x[base + j]) - mean) * inv * float(sc[pc.off[1] + j]);
    if (p[3] != 0) r += float(bi[pc.off[2] + j]);
    y[pc.off[3] + row * L + j] = ST(r);
  }
}
