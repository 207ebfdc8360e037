#version 450
// GatherElements, bit-exact in any storage variant: out[.., j_a, ..] =
// data[.., idx[.., j_a, ..], ..] along `axis`, the output shaped as the
// indices. Indices are int32 words (i64: the low word; a value outside
// int32 is out of range anyway); negative ones count from the end; one out
// of range writes 0 (cpu_ref reports it; a shader cannot). WORDS shader
// elements per tensor element (V_U32: 2 for an i64).
// p: 0 n (output elements), 1 rank, 2 axis, 3 axis length, 4 idx64, then
//    the indices' dims[rank], the data's strides[rank] (elements).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer I { int ind[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int rank = p[1], axis = p[2], len = p[3];
  int idx = ind[pc.off[1] + (p[4] != 0 ? 2u * i : i)];
  if (idx < 0) idx += len;
  bool ok = idx >= 0 && idx < len;
  uint rest = i, src = 0u;
  for (int d = rank - 1; d >= 0; --d) {
    uint dim = uint(p[5 + d]);
    uint c = rest % dim;
    rest /= dim;
    src += (d == axis ? uint(idx) : c) * uint(p[5 + rank + d]);
  }
  // Branches, not a select: selecting 8-bit values would need Int8.
  for (uint w = 0u; w < WORDS; ++w) {
    if (ok)
      y[pc.off[2] + i * WORDS + w] = x[pc.off[0] + src * WORDS + w];
    else
      y[pc.off[2] + i * WORDS + w] = ST(0);
  }
}
