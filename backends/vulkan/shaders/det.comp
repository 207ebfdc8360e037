#version 450
// Det: one invocation per matrix, cpu_ref's LU with partial pivoting in f64
// (needs shaderFloat64): the matrix copied to the node's scratch buffer as
// doubles (rows padded to RS, a multiple of 8, with zeros) and eliminated
// there in place; the first largest |pivot| of the column wins, a row swap
// flips the sign, an exactly zero pivot gives 0, rows whose factor is 0 are
// skipped. The f64 result is rounded once to f32 (then to the storage type,
// as cpu_ref's f32 kernel stores it).
// Row operations go 8 columns per loop iteration from the 8-aligned column
// at or below the first live one: llvmpipe (lavapipe) ends a shader's loops
// after 65,535 iterations in all, and a 64 x 64 LU column by column takes
// ~90,000. The extra columns (already eliminated, or padding) are never
// read again, so the live entries see cpu_ref's operations exactly.
// p: 0 matrices, 1 M, 2 RS.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };
layout(std430, binding = 3) buffer S { double s[]; };

void main() {
  uint b = linear_group() * 64u + gl_LocalInvocationID.x;
  if (b >= uint(p[0])) return;
  int m = p[1], rs = p[2];
  uint a = b * uint(m * rs), xb = pc.off[0] + b * uint(m * m);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < rs; c += 8)
      for (int u = 0; u < 8; ++u)  // unrolled: a constant trip count
        s[a + uint(r * rs + c + u)] = c + u < m ? double(float(x[xb + uint(r * m + c + u)])) : 0.0LF;
  double det = 1.0LF;
  for (int k = 0; k < m; ++k) {
    int piv = k;
    for (int i = k + 1; i < m; ++i)
      if (abs(s[a + uint(i * rs + k)]) > abs(s[a + uint(piv * rs + k)])) piv = i;
    double pivot = s[a + uint(piv * rs + k)];
    if (pivot == 0.0LF) {
      det = 0.0LF;
      break;
    }
    if (piv != k) {
      for (int c = k & ~7; c < rs; c += 8)
        for (int u = 0; u < 8; ++u) {
          uint pj = a + uint(piv * rs + c + u), kj = a + uint(k * rs + c + u);
          double t = s[pj];
          s[pj] = s[kj];
          s[kj] = t;
        }
      det = -det;
    }
    det *= pivot;
    for (int i = k + 1; i < m; ++i) {
      double f = s[a + uint(i * rs + k)] / pivot;
      if (f == 0.0LF) continue;
      for (int c = (k + 1) & ~7; c < rs; c += 8)
        for (int u = 0; u < 8; ++u) s[a + uint(i * rs + c + u)] -= f * s[a + uint(k * rs + c + u)];
    }
  }
  y[pc.off[1] + b] = ST(float(det));
}
