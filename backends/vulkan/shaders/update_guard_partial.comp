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
layout(std430, binding = 2) readonly buffer G0q { vec4 g0q[]; };
layout(std430, binding = 3) readonly buffer G1q { vec4 g1q[]; };
layout(std430, binding = 4) readonly buffer G2q { vec4 g2q[]; };
layout(std430, binding = 5) readonly buffer G3q { vec4 g3q[]; };
layout(std430, binding = 6) readonly buffer G4q { vec4 g4q[]; };
layout(std430, binding = 7) readonly buffer G5q { vec4 g5q[]; };
layout(std430, binding = 8) readonly buffer G6q { vec4 g6q[]; };

shared float red_sq[256];
shared uint red_bad[256];

float sq = 0.0;
uint bad = 0u;

void add(float v) {
  bad |= uint((floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u);
  sq += v * v;
}

// The loop over a chunk of gradient J sits inside a branch on J, rather
// than a load that branches per element: on llvmpipe only the taken branch
// runs, and its loads come from one fixed binding. Where the gradient's
// offset allows, 4 elements per load, then the chunk's tail one by one.
#define SUM_CHUNK(J, G, GQ)                                                \
  if (j == J) {                                                            \
    uint o = pc.off[1 + J];                                                \
    uint quads = (o & 3u) == 0u ? (end - begin) / 4u : 0u, q0 = (o + begin) / 4u; \
    for (uint q = t; q < quads; q += 256u) {                               \
      vec4 v = GQ[q0 + q];                                                 \
      add(v.x);                                                            \
      add(v.y);                                                            \
      add(v.z);                                                            \
      add(v.w);                                                            \
    }                                                                      \
    for (uint i = begin + quads * 4u + t; i < end; i += 256u) add(G[o + i]); \
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
  SUM_CHUNK(0, g0, g0q)
  SUM_CHUNK(1, g1, g1q)
  SUM_CHUNK(2, g2, g2q)
  SUM_CHUNK(3, g3, g3q)
  SUM_CHUNK(4, g4, g4q)
  SUM_CHUNK(5, g5, g5q)
  SUM_CHUNK(6, g6, g6q)
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
