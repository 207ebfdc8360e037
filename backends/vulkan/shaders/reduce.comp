#version 450
// ReduceSum / ReduceMean / GlobalAveragePool (OP 0 sum, 1 mean), one thread
// per output element summing its reduced elements in f32.
// p: 0 outputs, 1 reduced count, 2 nk, 3 nr, then kept dims[nk],
//    kept strides[nk], reduced dims[nr], reduced strides[nr] (input strides).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int nk = p[2], nr = p[3];
  uint rest = i, base = 0u;
  for (int d = nk - 1; d >= 0; --d) {
    uint dim = uint(p[4 + d]);
    base += (rest % dim) * uint(p[4 + nk + d]);
    rest /= dim;
  }
  int rd = 4 + 2 * nk;
  float s = 0.0;
  for (uint r = 0u; r < uint(p[1]); ++r) {
    uint rr = r, off = base;
    for (int d = nr - 1; d >= 0; --d) {
      uint dim = uint(p[rd + d]);
      off += (rr % dim) * uint(p[rd + nr + d]);
      rr /= dim;
    }
    s += float(x[pc.off[0] + off]);
  }
  if (OP == 1) s /= float(p[1]);
  y[pc.off[1] + i] = ST(s);
}
