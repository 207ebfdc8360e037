#version 450
// Pad, bit-exact in any storage variant: each output element reads its
// source element or writes the constant. Per dim, the source coordinate is
// k = o - lo (negative pads crop); outside [0, n): constant mode writes the
// value, edge clamps k, reflect mirrors it without repeating the edge
// (-k, or 2(n - 1) - k; the pads are smaller than n), as cpu_ref.
// WORDS shader elements per tensor element (V_U32: 2 for an i64).
// p: 0 n (output elements), 1 rank, 2 mode (0 constant, 1 edge, 2 reflect),
//    3 unused, then output dims[rank], input dims[rank], lo pads[rank],
//    input strides[rank] (elements), then the value: WORDS raw words
//    (V_U32), a byte (V_U8) or f32 bits of the value already rounded to the
//    storage type (float variants).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int rank = p[1], mode = p[2];
  int od = 4, id = 4 + rank, lo = 4 + 2 * rank, st = 4 + 3 * rank, val = 4 + 4 * rank;
  uint rest = i, src = 0u;
  bool inside = true;
  for (int d = rank - 1; d >= 0; --d) {
    uint dim = uint(p[od + d]);
    int k = int(rest % dim) - p[lo + d];
    rest /= dim;
    int n = p[id + d];
    if (k < 0 || k >= n) {
      if (mode == 0) inside = false;
      else if (mode == 1) k = clamp(k, 0, n - 1);
      else k = k < 0 ? -k : 2 * (n - 1) - k;
    }
    src += uint(k) * uint(p[st + d]);
  }
  for (uint w = 0u; w < WORDS; ++w) {
    uint at = pc.off[1] + i * WORDS + w;
    if (inside) {
      y[at] = x[pc.off[0] + src * WORDS + w];
    } else {
#if defined(V_U32)
      y[at] = uint(p[val + int(w)]);
#elif defined(V_U8)
      y[at] = uint8_t(uint(p[val]));
#else
      y[at] = ST(pf(val));
#endif
    }
  }
}
