#version 450
// Col2Im as a gather: one invocation per image cell sums the column
// elements that land on it, in cpu_ref's order (kernel offset kc
// ascending; for a given kc at most one block position reaches a cell), in
// f32 from 0: bit for bit cpu_ref's f32 sum. No atomics.
// p: 0 cells (N * C * image cells), 1 image cells, 2 block cells, 3 L,
//    4 k, then per axis a (5 + 6a): image, block, stride, dilation,
//    pad_begin, block positions.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int cells = p[1], blocks = p[2], L = p[3], k = p[4];
  uint plane = i / uint(cells);
  int cell = int(i % uint(cells));
  uint base = pc.off[0] + plane * uint(blocks * L);
  float acc = 0.0;
  for (int kc = 0; kc < blocks; ++kc) {
    // Axes from the last: kernel offset and cell coordinate unravelled
    // together, the block position l built row-major over the positions.
    int rk = kc, rc = cell, l = 0, lmul = 1;
    bool hit = true;
    for (int a = k - 1; a >= 0; --a) {
      int q = 5 + 6 * a;
      int off = rk % p[q + 1], at = rc % p[q];
      rk /= p[q + 1];
      rc /= p[q];
      int num = at + p[q + 4] - off * p[q + 3];
      int pos = num / p[q + 2];
      if (num < 0 || pos * p[q + 2] != num || pos >= p[q + 5]) {
        hit = false;
        break;
      }
      l += pos * lmul;
      lmul *= p[q + 5];
    }
    if (hit) acc += float(x[base + uint(kc * L + l)]);
  }
  y[pc.off[1] + i] = ST(acc);
}
