#version 450
// Add, Sub, Mul, Div, Pow, PRelu, Mod with NumPy broadcasting. OP:
// 0 add, 1 sub, 2 mul, 3 div, 4 pow, 5 prelu (A = X, B = the slope), 6 fmod
// (Mod fmod=1), 7 floored mod (Mod fmod=0, ONNX Mod 28).
// p: broadcast.glsl's, two inputs.
#include "common.glsl"
#include "broadcast.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };

// C's pow in f32 (GLSL's pow is undefined for a <= 0): integer exponents of
// negative bases keep the sign of odd powers, a non-integer one gives NaN;
// small integer exponents multiply (Pow(x, 2) exactly as x * x).
float pow_(float a, float e) {
  if (e == 0.0 || a == 1.0) return 1.0;
  if (isnan(a) || isnan(e)) return a + e;
  if (e == 1.0) return a;
  if (e == 2.0) return a * a;
  if (e == 3.0) return a * a * a;
  if (e == 0.5 && !(a < 0.0)) return sqrt(a);
  bool whole = floor(e) == e;
  if (a < 0.0 && !whole) return intBitsToFloat(0x7fc00000);
  float m = abs(a);
  float r;
  if (m == 0.0) r = e > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
  else if (isinf(m)) r = e > 0.0 ? m : 0.0;
  else r = exp2(e * log2(m));
  // An odd integer power of a negative base (or -0) is negative.
  bool odd = whole && abs(e) < 16777216.0 && mod(e, 2.0) == 1.0;
  return (odd && (a < 0.0 || (a == 0.0 && 1.0 / a < 0.0))) ? -r : r;
}

// C's fmod, exact: the magnitude reduced by |b| 2^e for e from the exponent
// difference down to 0; each subtraction is of two values within a factor
// of 2 of each other, so exact (Sterbenz). The dividend's sign.
float fmod_(float a, float b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == 0.0) return intBitsToFloat(0x7fc00000);
  float x = abs(a), y = abs(b);
  if (isinf(b) || x < y) return a;
  int ex, ey;
  frexp(x, ex);
  frexp(y, ey);
  for (int e = ex - ey; e >= 0; --e) {
    float t = ldexp(y, e);
    if (x >= t) x -= t;
  }
  return a < 0.0 ? -x : x;
}

// ONNX Mod 28's fmod=0 on floats, as the reference kernel: a zero takes the
// divisor's sign; a remainder of the other sign moves by one divisor (x
// finite and y infinite: y). NaN, infinite x or zero y stay fmod's NaN.
float floor_mod_(float a, float b) {
  float r = fmod_(a, b);
  if (r == 0.0) return b < 0.0 ? -0.0 : 0.0;
  return (r < 0.0) != (b < 0.0) ? r + b : r;
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint o[3] = broadcast_offsets(i, 2);
  CT va = CT(a[pc.off[0] + o[0]]), vb = CT(b[pc.off[1] + o[1]]), r;
  if (OP == 0) r = va + vb;
  else if (OP == 1) r = va - vb;
  else if (OP == 2) r = va * vb;
  else if (OP == 3) r = CT(float(va) / float(vb));  // division correctly rounded in f32
  else if (OP == 4) r = CT(pow_(float(va), float(vb)));
  else if (OP == 5) r = CT(float(va) < 0.0 ? float(vb) * float(va) : float(va));
  else if (OP == 6) r = CT(fmod_(float(va), float(vb)));
  else r = CT(floor_mod_(float(va), float(vb)));
  y[pc.off[2] + i] = ST(r);
}
