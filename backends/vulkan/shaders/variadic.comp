#version 450
// Min, Max, Sum, Mean over K (1..7) inputs with NumPy broadcasting, in f32,
// inputs combined in input order as cpu_ref. OP: 0 min, 1 max, 2 sum,
// 3 mean. Min and Max propagate NaN (the first NaN operand wins).
// Bindings 1..7 are the inputs (the host binds input 0 again in the unused
// ones), 8 the output.
// p: 0 n, 1 rank, 2.. dims[rank], then for each of the K inputs its element
//    strides[rank] (0 along the dims it repeats).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(constant_id = 1) const int K = 2;
layout(std430, binding = 1) readonly buffer X0 { ST x0[]; };
layout(std430, binding = 2) readonly buffer X1 { ST x1[]; };
layout(std430, binding = 3) readonly buffer X2 { ST x2[]; };
layout(std430, binding = 4) readonly buffer X3 { ST x3[]; };
layout(std430, binding = 5) readonly buffer X4 { ST x4[]; };
layout(std430, binding = 6) readonly buffer X5 { ST x5[]; };
layout(std430, binding = 7) readonly buffer X6 { ST x6[]; };
layout(std430, binding = 8) writeonly buffer Y { ST y[]; };

float load(int k, uint o) {
  uint at = pc.off[k] + o;
  if (k == 0) return float(x0[at]);
  if (k == 1) return float(x1[at]);
  if (k == 2) return float(x2[at]);
  if (k == 3) return float(x3[at]);
  if (k == 4) return float(x4[at]);
  if (k == 5) return float(x5[at]);
  return float(x6[at]);
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int rank = p[1];
  uint o[7] = uint[7](0u, 0u, 0u, 0u, 0u, 0u, 0u);
  uint rest = i;
  for (int d = rank - 1; d >= 0; --d) {
    uint dim = uint(p[2 + d]);
    uint c = rest % dim;
    rest /= dim;
    for (int k = 0; k < K; ++k) o[k] += c * uint(p[2 + (k + 1) * rank + d]);
  }
  float acc = load(0, o[0]);
  for (int k = 1; k < K; ++k) {
    float v = load(k, o[k]);
    if (OP >= 2) {
      acc += v;
    } else if (isnan(acc) || isnan(v)) {
      acc = isnan(acc) ? acc : v;
    } else if (OP == 0) {
      acc = v < acc ? v : acc;
    } else {
      acc = v > acc ? v : acc;
    }
  }
  if (OP == 3) acc /= float(K);
  y[pc.off[7] + i] = ST(acc);
}
