#version 450
// ConvTranspose for CPU Vulkan drivers (the blocked family, as
// conv2d_cpu.comp): each invocation computes RM output channels x RN
// consecutive output pixels of group z. Per tap (kh, kw) the pixels' input
// positions ih = (oh + pt - kh*dh) / sh (whole and in range, else the tap
// adds nothing) are found once, then the group's input channels are walked:
// each step loads RN input values and RM weights for RM*RN FMAs. Gathers,
// no atomics; accumulation is f32.
// W is [C, M/group, kH, kW].
// p: 0 N, 1 C, 2 H, 3 W, 4 M, 5 OH, 6 OW, 7 kH, 8 kW, 9 sh, 10 sw, 11 pt,
//    12 pl, 13 dh, 14 dw, 15 groups, 16 has_bias, 17 total outputs.
// Bindings: 1 X, 2 W, 3 bias (X when absent), 4 Y.
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

  // Per pixel: base of its image's group channels, oh + pt and ow + pl.
  uint xb[RN];
  int th0[RN], tw0[RN];
  [[unroll]] for (uint j = 0u; j < RN; ++j) {
    uint col = min(col0 + j, cols - 1u);
    uint n = col / ohw, q = col - n * ohw;
    uint oh = q / OW, ow = q - oh * OW;
    xb[j] = pc.off[0] + (n * C + g * Cg) * hw;
    th0[j] = int(oh) + p[11];
    tw0[j] = int(ow) + p[12];
  }
  // Per output channel: its weights for input channel g*Cg (channels past
  // Mg read the last one); input channel c adds c*Mg*khw.
  uint wr[RM];
  [[unroll]] for (uint i = 0u; i < RM; ++i) wr[i] = pc.off[1] + (g * Cg * Mg + min(m0 + i, Mg - 1u)) * khw;
  uint wc = Mg * khw;

  float acc[RM * RN];
  [[unroll]] for (uint i = 0u; i < RM * RN; ++i) acc[i] = 0.0;
  for (uint kh = 0u; kh < kH; ++kh) {
    for (uint kw = 0u; kw < kW; ++kw) {
      uint xo[RN];
      bool ok[RN];
      bool any_ok = false;
      [[unroll]] for (uint j = 0u; j < RN; ++j) {
        int th = th0[j] - int(kh) * dh, tw = tw0[j] - int(kw) * dw;
        int ih = th >= 0 ? th / sh : -1, iw = tw >= 0 ? tw / sw : -1;
        ok[j] = ih >= 0 && iw >= 0 && ih * sh == th && iw * sw == tw && ih < int(H) && iw < int(W);
        // A tap that adds nothing reads the image's first value (valid
        // memory), then zeroes.
        xo[j] = xb[j] + (ok[j] ? uint(ih) * W + uint(iw) : 0u);
        any_ok = any_ok || ok[j];
      }
      if (!any_ok) continue;
      uint wk = kh * kW + kw;
      for (uint c = 0u; c < Cg; ++c) {
        float xv[RN], wv[RM];
        [[unroll]] for (uint j = 0u; j < RN; ++j) {
          float v = float(x[xo[j] + c * hw]);
          xv[j] = ok[j] ? v : 0.0;
        }
        [[unroll]] for (uint i = 0u; i < RM; ++i) wv[i] = float(w[wr[i] + c * wc + wk]);
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
