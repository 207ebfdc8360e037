#version 450
// The unary elementwise ops. OP: 0 relu, 1 sigmoid, 2 tanh, 3 gelu erf,
// 4 gelu tanh, 5 clip, 6 hard sigmoid, 7 hard swish, 8 leaky relu, 9 erf,
// 10 sqrt, 11 reciprocal, 12 exp, 13 log, 14 neg, 15 abs, 16 floor, 17 ceil,
// 18 round (halves to even, as ONNX), 19 softplus, 20 mish, 21 sin, 22 cos,
// 23 tan, 24 asin, 25 acos, 26 atan, 27 sinh, 28 cosh, 29 asinh, 30 acosh,
// 31 atanh (trig.glsl: f32 in every variant, not the GLSL builtins).
// p: n, then two f32 attributes as bits: clip min, max; hard sigmoid alpha,
// beta; leaky relu alpha.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

#include "erf.glsl"

#include "trig.glsl"

// log(1 + e^v) without overflow, as cpu_ref: v + log1p(e^-v) for v > 0.
// trig.glsl's log1p: the builtin log is not accurate near 1 on every
// driver (lavapipe: Mish(-13.7) 7 % off with log(u) * (v / (u - 1))).
float softplus(float v) { return v > 0.0 ? v + log1p_acc(exp(-v)) : log1p_acc(exp(v)); }

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
  else if (OP == 6 || OP == 7) {
    // Explicit comparisons rather than clamp(): a NaN stays NaN, as in cpu_ref.
    float t = OP == 6 ? pf(1) * f + pf(2) : f / 6.0 + 0.5;
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    r = OP == 6 ? t : f * t;
  }
  else if (OP == 8) r = f < 0.0 ? pf(1) * f : f;
  else if (OP == 9) r = erf_approx(f);
  else if (OP == 10) r = sqrt(f);
  else if (OP == 11) r = 1.0 / f;
  else if (OP == 12) r = exp(f);
  // trig.glsl's log_ on the normal positive floats (the builtin's error
  // near 1 is absolute: Log(1 + 1e-4) would be ~0.5 % off); 0, negatives,
  // subnormals, inf and NaN through the builtin, whose results are exact.
  else if (OP == 13) r = f >= 1.17549435e-38 ? log_(f) : log(f);
  else if (OP == 14) r = -f;
  else if (OP == 15) r = abs(f);
  else if (OP == 16) r = floor(f);
  else if (OP == 17) r = ceil(f);
  else if (OP == 18) r = roundEven(f);
  else if (OP == 19) r = softplus(f);
  else if (OP == 20) r = f * safe_tanh(softplus(f));
  else if (OP <= 23) r = trig(f, OP - 21);
  else if (OP == 24) r = asin_(f);
  else if (OP == 25) r = acos_(f);
  else if (OP == 26) r = atan_(f);
  else if (OP == 27) r = sinh_(f);
  else if (OP == 28) r = cosh_(f);
  else if (OP == 29) r = asinh_(f);
  else if (OP == 30) r = acosh_(f);
  else r = atanh_(f);
  y[pc.off[1] + i] = ST(r);
}
