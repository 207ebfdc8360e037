#version 450
// ReduceSum / ReduceMean / GlobalAveragePool and the ONNX reductions, one
// thread per output element visiting its reduced elements in input order in
// f32, as cpu_ref. OP: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 L2 (sqrt of
// the sum of squares), 6 sum of squares, 7 log-sum-exp (the maximum
// subtracted: m + log(sum(exp(x - m))); m itself when it is infinite).
// Max and min: NaN, once seen, stays.
// p: 0 outputs, 1 reduced count, 2 nk, 3 nr, then kept dims[nk],
//    kept strides[nk], reduced dims[nr], reduced strides[nr] (input strides).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

// Input offset of reduced element r of the output element at `base`.
uint at(uint base, uint r) {
  int nk = p[2], nr = p[3];
  int rd = 4 + 2 * nk;
  uint rr = r, off = base;
  for (int d = nr - 1; d >= 0; --d) {
    uint dim = uint(p[rd + d]);
    off += (rr % dim) * uint(p[rd + nr + d]);
    rr /= dim;
  }
  return pc.off[0] + off;
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int nk = p[2];
  uint rest = i, base = 0u;
  for (int d = nk - 1; d >= 0; --d) {
    uint dim = uint(p[4 + d]);
    base += (rest % dim) * uint(p[4 + nk + d]);
    rest /= dim;
  }
  uint count = uint(p[1]);
  const float inf = uintBitsToFloat(0x7f800000u);
  float s;
  if (OP == 2 || OP == 3 || OP == 7) {
    s = OP == 3 ? inf : -inf;
    for (uint r = 0u; r < count; ++r) {
      float v = float(x[at(base, r)]);
      if ((OP == 3 ? v < s : v > s) || isnan(v)) s = v;
    }
    if (OP == 7 && !isinf(s)) {
      float m = s, e = 0.0;
      for (uint r = 0u; r < count; ++r) e += exp(float(x[at(base, r)]) - m);
      s = m + log(e);
    }
  } else if (OP == 4) {
    s = 1.0;
    for (uint r = 0u; r < count; ++r) s *= float(x[at(base, r)]);
  } else {
    s = 0.0;
    for (uint r = 0u; r < count; ++r) {
      float v = float(x[at(base, r)]);
      s += OP >= 5 ? v * v : v;
    }
    if (OP == 1) s /= float(count);
    if (OP == 5) s = sqrt(s);
  }
  y[pc.off[1] + i] = ST(s);
}
