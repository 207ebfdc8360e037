#version 450
// UpdateGuard, pass 1 of 2, f32 only (docs/OPS.md, "Training ops";
// plan_update_guard in ops_train.cpp). Up to 7 gradients per dispatch, each
// cut into chunks of p[1] elements, one workgroup per chunk: every gradient
// is read by many workgroups at once. A workgroup writes 2 words to its
// slot of the node's scratch buffer: its sum of squares (f32 bits; each
// invocation sums a strided slice, then a fixed tree adds the 256) and
// whether it saw a non-finite value (exponent bits: no isnan/isinf a
// fast-math compiler may drop). update_guard_final adds the slots in slot
// order, so the result never depends on timing.
// p: 0 gradients here k (1..7), 1 chunk elements, 2 this dispatch's first
// scratch slot, 3..9 the sizes, 10..17 each gradient's first workgroup
// (prefix sums; p[10 + k] is the total).
// Bindings: 1 scratch, 2..8 the gradients (unused ones repeat one bound).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) writeonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer G0 { float g0[]; };
layout(std430, binding = 3) readonly buffer G1 { float g1[]; };
layout(std430, binding = 4) readonly buffer G2 { float g2[]; };
layout(std430, binding = 5) readonly buffer G3 { float g3[]; };
layout(std430, binding = 6) readonly buffer G4 { float g4[]; };
layout(std430, binding = 7) readonly buffer G5 { float g5[]; };
layout(std430, binding = 8) readonly buffer G6 { float g6[]; };

shared float red_sq[256];
shared uint red_bad[256];

// The loop over a chunk of gradient J sits inside a branch on J, rather
// than a load that branches per element: on llvmpipe only the taken branch
// runs, and its loads come from one fixed binding.
#define SUM_CHUNK(J, G)                                            \
  if (j == J) {                                                    \
    for (uint i = begin + t; i < end; i += 256u) {                 \
      float v = G[pc.off[1 + J] + i];                              \
      bad |= uint((floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u); \
      sq += v * v;                                                 \
    }                                                              \
  }

void main() {
  uint g = linear_group();
  int k = p[0];
  if (g >= uint(p[10 + k])) return;  // the grid's padding
  int j = 0;
  while (j + 1 < k && g >= uint(p[11 + j])) ++j;
  uint t = gl_LocalInvocationID.x;
  uint n = uint(p[3 + j]);
  uint begin = (g - uint(p[10 + j])) * uint(p[1]);
  uint end = min(begin + uint(p[1]), n);
  float sq = 0.0;
  uint bad = 0u;
  SUM_CHUNK(0, g0)
  SUM_CHUNK(1, g1)
  SUM_CHUNK(2, g2)
  SUM_CHUNK(3, g3)
  SUM_CHUNK(4, g4)
  SUM_CHUNK(5, g5)
  SUM_CHUNK(6, g6)
  red_sq[t] = sq;
  red_bad[t] = bad;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) {
      red_sq[t] += red_sq[t + s];
      red_bad[t] |= red_bad[t + s];
    }
    barrier();
  }
  if (t != 0u) return;
  uint slot = pc.off[0] + (uint(p[2]) + g) * 2u;
  w[slot] = floatBitsToUint(red_sq[0]);
  w[slot + 1u] = red_bad[0];
}
