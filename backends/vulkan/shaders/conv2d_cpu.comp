#version 450
// Conv2d as an implicit GEMM for CPU Vulkan drivers (see gemm_cpu.comp): no
// shared memory, no barriers; each invocation computes RM output channels x
// RN consecutive output pixels (columns of the per-group GEMM, N*OH*OW of
// them) of group z, walking the Cg x kH x kW window directly: each step
// loads RN input values and RM weights for RM*RN FMAs, and the pixel
// decomposition (divisions) happens once per invocation, not per load.
// Same parameters and bindings as conv2d.comp. Accumulation is f32.
// p: 0 N, 1 C, 2 H, 3 W, 4 M, 5 OH, 6 OW, 7 kH, 8 kW, 9 sh, 10 sw, 11 pt,
//    12 pl, 13 dh, 14 dw, 15 groups, 16 has_bias.
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 8, local_size_y = 8) in;
const uint RM = 8u;  // output channels per invocation
const uint RN = 8u;  // output pixels per invocation
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer Wt { ST w[]; };
layout(std430, binding = 3) readonly buffer Bias { ST bias[]; };
layout(std430, binding = 4) writeonly buffer Y { ST y[]; };

void main() {
  uint g = gl_WorkGroupID.z;
  uint C = uint(p[1]), H = uint(p[2]), W = uint(p[3]), M = uint(p[4]);
  uint OW = uint(p[6]), kH = uint(p[7]), kW = uint(p[8]);
  uint ohw = uint(p[5]) * OW, cols = uint(p[0]) * ohw;
  uint groups = uint(p[15]), Cg = C / groups, Mg = M / groups;
  int sh = p[9], sw = p[10], dh = p[13], dw = p[14];
  uint m0 = gl_GlobalInvocationID.y * RM, col0 = gl_GlobalInvocationID.x * RN;
  if (m0 >= Mg || col0 >= cols) return;
  uint hw = H * W, khw = kH * kW;

  // Per pixel: base of its image's group channels, top-left input corner.
  uint xb[RN];
  int ih0[RN], iw0[RN];
  [[unroll]] for (uint j = 0u; j < RN; ++j) {
    uint col = min(col0 + j, cols - 1u);
    uint n = col / ohw, q = col - n * ohw;
    uint oh = q / OW, ow = q - oh * OW;
    xb[j] = pc.off[0] + (n * C + g * Cg) * hw;
    ih0[j] = int(oh) * sh - p[11];
    iw0[j] = int(ow) * sw - p[12];
  }
  // Per output channel: its weight row (channels past Mg read the last one).
  uint wr[RM];
  [[unroll]] for (uint i = 0u; i < RM; ++i) wr[i] = pc.off[1] + (g * Mg + min(m0 + i, Mg - 1u)) * Cg * khw;

  float acc[RM * RN];
  [[unroll]] for (uint i = 0u; i < RM * RN; ++i) acc[i] = 0.0;
  for (uint c = 0u; c < Cg; ++c) {
    for (uint kh = 0u; kh < kH; ++kh) {
      for (uint kw = 0u; kw < kW; ++kw) {
        uint wk = (c * kH + kh) * kW + kw;
        float xv[RN], wv[RM];
        [[unroll]] for (uint j = 0u; j < RN; ++j) {
          int ih = ih0[j] + int(kh) * dh, iw = iw0[j] + int(kw) * dw;
          bool in_img = ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W);
          // Padding reads the pixel's own corner (valid memory), then zeroes.
          uint idx = xb[j] + c * hw + (in_img ? uint(ih) * W + uint(iw) : 0u);
          float v = float(x[idx]);
          xv[j] = in_img ? v : 0.0;
        }
        [[unroll]] for (uint i = 0u; i < RM; ++i) wv[i] = float(w[wr[i] + wk]);
        [[unroll]] for (uint i = 0u; i < RM; ++i)
          [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i * RN + j] = fma(wv[i], xv[j], acc[i * RN + j]);
      }
    }
  }

  bool has_bias = p[16] != 0;
  [[unroll]] for (uint i = 0u; i < RM; ++i) {
    uint m = m0 + i;
    if (m >= Mg) break;
    uint oc = g * Mg + m;
    float bv = has_bias ? float(bias[pc.off[2] + oc]) : 0.0;
    [[unroll]] for (uint j = 0u; j < RN; ++j) {
      uint col = col0 + j;
      if (col >= cols) break;
      uint n = col / ohw, q = col - n * ohw;
      y[pc.off[3] + (n * M + oc) * ohw + q] = ST(acc[i * RN + j] + bv);
    }
  }
}
