#version 450
// ArgMax (MIN 0) and ArgMin (MIN 1) over one axis: one thread per (outer,
// inner) position scans its L elements `inner` apart in f32 (exact for
// every variant: comparisons only).
// The result is an i64 index, written as two 32-bit words (low, then high =
// 0: L fits the kernels' 32-bit indexing). Rules as cpu_ref: the first
// extreme, or the last one with select_last_index; the first NaN is the
// extreme (NumPy), where the driver keeps NaNs at all (Vulkan lets it assume
// there are none without float controls).
// p: 0 rows (outer * inner), 1 L, 2 inner, 3 select_last_index.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int MIN = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

void main() {
  uint r = linear_group() * 256u + gl_LocalInvocationID.x;
  if (r >= uint(p[0])) return;
  uint L = uint(p[1]), inner = uint(p[2]);
  uint base = pc.off[0] + (r / inner) * L * inner + r % inner;
  bool last = p[3] != 0;
  float m = float(x[base]);
  uint best = 0u;
  for (uint j = 1u; j < L; ++j) {
    if (isnan(m)) break;
    float v = float(x[base + j * inner]);
    if ((MIN != 0 ? v < m : v > m) || (last && v == m) || isnan(v)) {
      m = v;
      best = j;
    }
  }
  y[pc.off[1] + 2u * r] = best;
  y[pc.off[1] + 2u * r + 1u] = 0u;
}
