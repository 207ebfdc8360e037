#version 450
// TopK by rank: one thread per input element counts the elements of its
// row that come before it in cpu_ref's total order (larger first, or
// smaller with largest = 0; NaN above every number; equal values by lower
// index) and, if that rank is below k, writes its value and index to
// output position `rank`. O(L) per element: the host declines long rows.
// Values are copied (exact); indices are i64 as (low, 0) word pairs.
// p: 0 n (input elements), 1 L, 2 inner, 3 k, 4 largest.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer V { ST vals[]; };
layout(std430, binding = 3) writeonly buffer I { uint idx[]; };

// a > b with NaN above every number.
bool greater(float a, float b) {
  if (isnan(a)) return !isnan(b);
  if (isnan(b)) return false;
  return a > b;
}

void main() {
  uint t = linear_group() * 256u + gl_LocalInvocationID.x;
  if (t >= uint(p[0])) return;
  uint L = uint(p[1]), inner = uint(p[2]), k = uint(p[3]);
  bool largest = p[4] != 0;
  uint o = t / (L * inner), rem = t % (L * inner);
  uint a = rem / inner, i = rem % inner;
  uint base = pc.off[0] + o * L * inner + i;
  float va = float(x[base + a * inner]);
  uint rank = 0u;
  for (uint b = 0u; b < L; ++b) {
    if (b == a) continue;
    float vb = float(x[base + b * inner]);
    bool b_first = largest ? greater(vb, va) : greater(va, vb);
    bool a_first = largest ? greater(va, vb) : greater(vb, va);
    if (b_first || (!a_first && b < a)) ++rank;
  }
  if (rank >= k) return;
  uint at = (o * k + rank) * inner + i;
  vals[pc.off[1] + at] = x[base + a * inner];
  idx[pc.off[2] + 2u * at] = a;
  idx[pc.off[2] + 2u * at + 1u] = 0u;
}
