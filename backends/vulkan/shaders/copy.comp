#version 450
// Strided element copy, bit-exact: Transpose, Slice (negative steps too),
// Concat (one dispatch per input), Reshape/Flatten/Dropout (rank 1).
// Element i of the iteration space dims[rank] reads
// x[src_base + sum c_d * src_stride_d] and writes y[dst_base + sum c_d * dst_stride_d].
// p: 0 n, 1 rank, 2 src_base, 3 dst_base, dims[rank], src strides[rank],
//    dst strides[rank].
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int rank = p[1];
  uint rest = i;
  int s = p[2], d = p[3];
  for (int k = rank - 1; k >= 0; --k) {
    int dim = p[4 + k];
    int c = int(rest % uint(dim));
    rest /= uint(dim);
    s += c * p[4 + rank + k];
    d += c * p[4 + 2 * rank + k];
  }
  y[pc.off[1] + uint(d)] = x[pc.off[0] + uint(s)];
}
