#version 450
// Gather: data viewed as [outer, D, inner], out as [outer, Ni, inner].
// Indices are int32 words; i64 indices are read as their low word (the
// host refuses values outside int32). Negative indices count from the end;
// an index out of range writes 0 (cpu_ref reports it; a shader cannot).
// Any storage variant: an element of several words (V_U32: an i64 is 2) is
// `inner` counted in words, so the data move bit-exactly in every dtype.
// p: 0 n, 1 D, 2 inner, 3 Ni, 4 idx64 (n and inner in shader elements).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer I { int ind[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint inner = uint(p[2]), Ni = uint(p[3]);
  uint in_i = i % inner, t = i / inner;
  uint j = t % Ni, o = t / Ni;
  int idx = ind[pc.off[1] + (p[4] != 0 ? 2u * j : j)];
  if (idx < 0) idx += p[1];
  if (idx < 0 || idx >= p[1]) {
    y[pc.off[2] + i] = ST(0);
    return;
  }
  y[pc.off[2] + i] = x[pc.off[0] + (o * uint(p[1]) + uint(idx)) * inner + in_i];
}
