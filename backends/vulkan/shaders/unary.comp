#version 450
// Relu, Sigmoid, Tanh, Gelu (erf / tanh), Clip, HardSigmoid, HardSwish.
// OP: 0 relu, 1 sigmoid, 2 tanh, 3 gelu erf, 4 gelu tanh, 5 clip,
// 6 hard sigmoid, 7 hard swish. p: n, then two f32 attributes as bits:
// clip min, max; hard sigmoid alpha, beta.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

#include "erf.glsl"

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  if (OP == 0) {
    y[pc.off[1] + i] = ST(max(CT(x[pc.off[0] + i]), CT(0)));
    return;
  }
  float f = float(x[pc.off[0] + i]), r;
  if (OP == 1) r = 1.0 / (1.0 + exp(-f));
  else if (OP == 2) r = safe_tanh(f);
  else if (OP == 3) r = 0.5 * f * (1.0 + erf_approx(f * 0.70710678118654752));
  else if (OP == 4) r = 0.5 * f * (1.0 + safe_tanh(0.79788456080286536 * (f + 0.044715 * f * f * f)));
  else if (OP == 5) r = min(max(f, pf(1)), pf(2));
  else {
    // Explicit comparisons rather than clamp(): a NaN stays NaN, as in cpu_ref.
    float t = OP == 6 ? pf(1) * f + pf(2) : f / 6.0 + 0.5;
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    r = OP == 6 ? t : f * t;
  }
  y[pc.off[1] + i] = ST(r);
}
