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

// Parameters read once per invocation (every buffer read is a gather on CPU
// drivers, and the tile loads are the hot loop).
uint C, H, W, M, OW, kW, khw, ohw, Cg, Mg, KK;
int sh, sw, pt, pl, dh, dw;

float loadA(uint g, uint m, uint k) { return float(w[pc.off[1] + (g * Mg + m) * KK + k]); }
float loadB(uint g, uint k, uint col) {
  uint c = k / khw, r = k - c * khw;
  uint kh = r / kW, kw = r - kh * kW;
  uint n = col / ohw, q = col - n * ohw;
  uint oh = q / OW, ow = q - oh * OW;
  int ih = int(oh) * sh - pt + int(kh) * dh;
  int iw = int(ow) * sw - pl + int(kw) * dw;
  if (ih < 0 || ih >= int(H) || iw < 0 || iw >= int(W)) return 0.0;
  return float(x[pc.off[0] + ((n * C + g * Cg + c) * H + uint(ih)) * W + uint(iw)]);
}
void storeC(uint g, uint m, uint col, float acc) {
  uint oc = g * Mg + m;
  if (p[16] != 0) acc += float(bias[pc.off[2] + oc]);
  uint n = col / ohw, q = col - n * ohw;
  y[pc.off[3] + (n * M + oc) * ohw + q] = ST(acc);
}
#include "gemm_tile.glsl"

void main() {
  C = uint(p[1]);
  H = uint(p[2]);
  W = uint(p[3]);
  M = uint(p[4]);
  OW = uint(p[6]);
  kW = uint(p[8]);
  khw = uint(p[7] * p[8]);
  ohw = uint(p[5] * p[6]);
  Cg = C / uint(p[15]);
  Mg = M / uint(p[15]);
  KK = Cg * khw;
  sh = p[9];
  sw = p[10];
  pt = p[11];
  pl = p[12];
  dh = p[13];
  dw = p[14];
  gemm_tile(gl_WorkGroupID.z, Mg, uint(p[0]) * ohw, KK);
}
