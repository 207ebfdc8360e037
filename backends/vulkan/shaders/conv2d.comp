#version 450
// Conv2d as an implicit GEMM per group (z = group): rows are the group's
// output channels, columns the N*OH*OW output pixels, the K dimension
// Cg*kH*kW; the im2col matrix is never materialised, loadB gathers it.
// p: 0 N, 1 C, 2 H, 3 W, 4 M, 5 OH, 6 OW, 7 kH, 8 kW, 9 sh, 10 sw, 11 pt,
//    12 pl, 13 dh, 14 dw, 15 groups, 16 has_bias.
// Bindings: 1 X, 2 W, 3 bias (X when absent), 4 Y.
#include "common.glsl"
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer Wt { ST w[]; };
layout(std430, binding = 3) readonly buffer Bias { ST bias[]; };
layout(std430, binding = 4) writeonly buffer Y { ST y[]; };

uint Cg() { return uint(p[1] / p[15]); }
uint Mg() { return uint(p[4] / p[15]); }
uint KK() { return Cg() * uint(p[7] * p[8]); }

float loadA(uint g, uint m, uint k) {
  return float(w[pc.off[1] + (g * Mg() + m) * KK() + k]);
}
float loadB(uint g, uint k, uint col) {
  uint khw = uint(p[7] * p[8]);
  uint c = k / khw, r = k - c * khw;
  int kh = int(r / uint(p[8])), kw = int(r % uint(p[8]));
  uint ohw = uint(p[5] * p[6]);
  uint n = col / ohw, q = col - n * ohw;
  int oh = int(q / uint(p[6])), ow = int(q % uint(p[6]));
  int ih = oh * p[9] - p[11] + kh * p[13];
  int iw = ow * p[10] - p[12] + kw * p[14];
  if (ih < 0 || ih >= p[2] || iw < 0 || iw >= p[3]) return 0.0;
  uint ch = g * Cg() + c;
  return float(x[pc.off[0] + ((n * uint(p[1]) + ch) * uint(p[2]) + uint(ih)) * uint(p[3]) + uint(iw)]);
}
void storeC(uint g, uint m, uint col, float acc) {
  uint oc = g * Mg() + m;
  if (p[16] != 0) acc += float(bias[pc.off[2] + oc]);
  uint ohw = uint(p[5] * p[6]);
  uint n = col / ohw, q = col - n * ohw;
  y[pc.off[3] + (n * uint(p[4]) + oc) * ohw + q] = ST(acc);
}
#include "gemm_tile.glsl"

void main() {
  gemm_tile(gl_WorkGroupID.z, Mg(), uint(p[0] * p[5] * p[6]), KK());
}
