#version 450
// GatherGrad without scatter: dData viewed as [outer, D, inner], dY as
// [outer, K, inner]; one invocation per element of dData sums, in index
// order as cpu_ref, dY[o, k, i] over the k whose index (negative: from the
// end) is its row. An index outside [-D, D) makes every element NaN (a
// shader cannot report cpu_ref's run-time error). Indices are 32-bit words:
// i64 as two (the high word must be the sign extension of the low one).
// p: 0 n, 1 D, 2 inner, 3 K, 4 idx64. Bindings: 1 dY, 2 indices, 3 dData.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer I { int ind[]; };
layout(std430, binding = 3) writeonly buffer DD { ST dd[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int D = p[1], K = p[3];
  uint inner = uint(p[2]);
  uint in_i = i % inner, t = i / inner;
  int row = int(t % uint(D));
  uint o = t / uint(D);
  float acc = 0.0;
  bool bad = false;
  for (int k = 0; k < K; ++k) {
    int idx;
    if (p[4] != 0) {
      idx = ind[pc.off[1] + 2u * uint(k)];
      if (ind[pc.off[1] + 2u * uint(k) + 1u] != (idx < 0 ? -1 : 0)) bad = true;
    } else {
      idx = ind[pc.off[1] + uint(k)];
    }
    if (idx < -D || idx >= D) bad = true;
    if (idx < 0) idx += D;
    if (idx == row) acc += float(dy[pc.off[0] + (o * uint(K) + uint(k)) * inner + in_i]);
  }
  dd[pc.off[2] + i] = ST(bad ? uintBitsToFloat(0x7fc00000u) : acc);
}
