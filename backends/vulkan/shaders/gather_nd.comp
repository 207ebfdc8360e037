#version 450
// GatherND, bit-exact in any storage variant: per index tuple t (counted
// over the batch entries), the slice of data its `depth` coordinates name,
// in the batch entry t / tuples. Sizes and strides are in shader elements
// (an element of several words counts them). Indices are int32 words (i64:
// the low word); negative ones count from the end; one out of range writes
// 0 (cpu_ref reports it; a shader cannot).
// p: 0 n (output shader elements), 1 slice, 2 tuples per batch entry,
//    3 batch stride, 4 depth, 5 idx64, then per coordinate its dim[depth]
//    and its stride[depth].
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer I { int ind[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint slice = uint(p[1]), t = i / slice, s = i % slice;
  int depth = p[4];
  uint src = (t / uint(p[2])) * uint(p[3]) + s;
  bool ok = true;
  for (int k = 0; k < depth; ++k) {
    uint at = t * uint(depth) + uint(k);
    int idx = ind[pc.off[1] + (p[5] != 0 ? 2u * at : at)];
    int len = p[6 + k];
    if (idx < 0) idx += len;
    ok = ok && idx >= 0 && idx < len;
    src += uint(idx) * uint(p[6 + depth + k]);
  }
  // Branches, not a select: selecting 8-bit values would need Int8.
  if (ok)
    y[pc.off[2] + i] = x[pc.off[0] + src];
  else
    y[pc.off[2] + i] = ST(0);
}
