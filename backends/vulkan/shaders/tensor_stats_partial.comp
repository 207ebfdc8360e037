#version 450
// TensorStats, pass 1 of 2 (docs/OPS.md, "Training ops"; plan_tensor_stats
// in ops_train.cpp). Up to 7 inputs of one dtype per dispatch (V_F32, or
// V_F16S: f16 storage widened exactly), each cut into chunks of p[2]
// elements, one workgroup per chunk, so a large tensor is read by many
// workgroups at once. A workgroup writes 4 words to its slot of the node's
// scratch buffer: the largest finite |x| (its float bits: non-negative
// floats order as their bits do), the non-finite count, the nonzero finite
// count, and the count of nonzero elements below `tiny`. Integer counts and
// a max do not depend on the order of anything, so tensor_stats_final's rows
// never depend on timing. Non-finite values are found from their exponent
// bits (no isnan/isinf a fast-math compiler may drop).
// p: 0 inputs here k (1..7), 1 tiny (float bits), 2 chunk elements, 3 this
// dispatch's first scratch slot, 4..10 the sizes, 11..18 each input's first
// workgroup (prefix sums; p[11 + k] is the total).
// Bindings: 1 scratch, 2..8 the inputs (unused ones repeat input 0).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) writeonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer X0 { ST x0[]; };
layout(std430, binding = 3) readonly buffer X1 { ST x1[]; };
layout(std430, binding = 4) readonly buffer X2 { ST x2[]; };
layout(std430, binding = 5) readonly buffer X3 { ST x3[]; };
layout(std430, binding = 6) readonly buffer X4 { ST x4[]; };
layout(std430, binding = 7) readonly buffer X5 { ST x5[]; };
layout(std430, binding = 8) readonly buffer X6 { ST x6[]; };
layout(std430, binding = 2) readonly buffer X0q { ST4 x0q[]; };
layout(std430, binding = 3) readonly buffer X1q { ST4 x1q[]; };
layout(std430, binding = 4) readonly buffer X2q { ST4 x2q[]; };
layout(std430, binding = 5) readonly buffer X3q { ST4 x3q[]; };
layout(std430, binding = 6) readonly buffer X4q { ST4 x4q[]; };
layout(std430, binding = 7) readonly buffer X5q { ST4 x5q[]; };
layout(std430, binding = 8) readonly buffer X6q { ST4 x6q[]; };

shared uint red_max[256];
shared uint red_bad[256];
shared uint red_nz[256];
shared uint red_small[256];

uint amax = 0u, bad = 0u, nz = 0u, small = 0u;
float tiny;

void count(float v) {
  uint bits = floatBitsToUint(v) & 0x7fffffffu;
  bool finite = (bits & 0x7f800000u) != 0x7f800000u;
  bad += finite ? 0u : 1u;
  amax = finite ? max(amax, bits) : amax;
  nz += finite && bits != 0u ? 1u : 0u;
  small += bits != 0u && uintBitsToFloat(bits) < tiny ? 1u : 0u;
}

// The loop over a chunk of input J sits inside a branch on J, rather than
// a load that branches per element: on llvmpipe only the taken branch runs,
// and its loads come from one fixed binding. Where the tensor's offset
// allows, 4 elements per load (a CPU driver loads per lane in a loop), then
// the chunk's tail one by one.
#define COUNT_CHUNK(J, X, XQ)                                              \
  if (j == J) {                                                            \
    uint o = pc.off[1 + J];                                                \
    uint quads = (o & 3u) == 0u ? (end - begin) / 4u : 0u, q0 = (o + begin) / 4u; \
    for (uint q = t; q < quads; q += 256u) {                               \
      vec4 v = vec4(XQ[q0 + q]);                                           \
      count(v.x);                                                          \
      count(v.y);                                                          \
      count(v.z);                                                          \
      count(v.w);                                                          \
    }                                                                      \
    for (uint i = begin + quads * 4u + t; i < end; i += 256u) count(float(X[o + i])); \
  }

void main() {
  uint g = linear_group();
  int k = p[0];
  if (g >= uint(p[11 + k])) return;  // the grid's padding
  int j = 0;
  while (j + 1 < k && g >= uint(p[12 + j])) ++j;
  uint t = gl_LocalInvocationID.x;
  uint n = uint(p[4 + j]);
  uint begin = (g - uint(p[11 + j])) * uint(p[2]);
  uint end = min(begin + uint(p[2]), n);
  tiny = pf(1);
  COUNT_CHUNK(0, x0, x0q)
  COUNT_CHUNK(1, x1, x1q)
  COUNT_CHUNK(2, x2, x2q)
  COUNT_CHUNK(3, x3, x3q)
  COUNT_CHUNK(4, x4, x4q)
  COUNT_CHUNK(5, x5, x5q)
  COUNT_CHUNK(6, x6, x6q)
  red_max[t] = amax;
  red_bad[t] = bad;
  red_nz[t] = nz;
  red_small[t] = small;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) {
      red_max[t] = max(red_max[t], red_max[t + s]);
      red_bad[t] += red_bad[t + s];
      red_nz[t] += red_nz[t + s];
      red_small[t] += red_small[t + s];
    }
    barrier();
  }
  if (t != 0u) return;
  uint slot = pc.off[0] + (uint(p[3]) + g) * 4u;
  w[slot] = red_max[0];
  w[slot + 1u] = red_bad[0];
  w[slot + 2u] = red_nz[0];
  w[slot + 3u] = red_small[0];
}
