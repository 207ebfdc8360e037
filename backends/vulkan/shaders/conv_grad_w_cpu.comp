#version 450
// Conv2dGradWeight for CPU drivers (PlanTarget::blocked_gemm, as
// gemm_cpu/conv2d_cpu): an invocation computes a block of up to 4 output
// channels (of one group) x up to 9 taps of one input channel, so each dY
// value loaded feeds up to 9 FMAs and each X value up to 4 (one invocation
// per weight element loads two values per FMA). The invocations of a
// dispatch walk the same (n, oh, ow) positions and, but for kernels larger
// than 9 taps, the same taps, so the tap checks do not diverge. f32
// accumulators, summed in a fixed order. p as conv_grad_w.comp.
// Bindings: 1 dY, 2 X, 3 dW.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(local_size_x = 32) in;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer X { ST x[]; };
layout(std430, binding = 3) writeonly buffer DW { ST dw[]; };

void main() {
  uint i = linear_group() * 32u + gl_LocalInvocationID.x;
  int N = p[0], C = p[1], H = p[2], W = p[3], M = p[4], Cg = p[5], Mg = p[6];
  int kH = p[7], kW = p[8], OH = p[9], OW = p[10];
  int sh = p[11], sw = p[12], pt = p[13], pl = p[14], dh = p[15], dwl = p[16];
  int taps = kH * kW, tblocks = (taps + 8) / 9, mblocks = (Mg + 3) / 4, G = M / Mg;
  if (i >= uint(G * mblocks * Cg * tblocks)) return;
  int c = int(i % uint(Cg));
  uint rest = i / uint(Cg);
  int mb = int(rest % uint(mblocks));
  rest /= uint(mblocks);
  int g = int(rest % uint(G));
  int tb = int(rest / uint(G));
  int m0 = g * Mg + mb * 4, mcount = min(4, Mg - mb * 4);
  int t0 = tb * 9, tcount = min(9, taps - t0);
  int ci = g * Cg + c;
  // Each tap's input offset from (oh*sh - pt, ow*sw - pl).
  int toh[9], tow[9];
  [[unroll]] for (int t = 0; t < 9; ++t) {
    int tt = min(t0 + t, taps - 1);
    toh[t] = (tt / kW) * dh;
    tow[t] = (tt % kW) * dwl;
  }
  float acc[4][9];
  [[unroll]] for (int r = 0; r < 4; ++r)
    [[unroll]] for (int t = 0; t < 9; ++t) acc[r][t] = 0.0;
  uint plane = uint(OH * OW);
  for (int n = 0; n < N; ++n) {
    uint yb = pc.off[0] + uint(n * M + m0) * plane;
    uint xb = pc.off[1] + uint((n * C + ci) * H * W);
    for (int oh = 0; oh < OH; ++oh) {
      int h0 = oh * sh - pt;
      for (int ow = 0; ow < OW; ++ow) {
        int w0 = ow * sw - pl;
        uint yo = yb + uint(oh * OW + ow);
        float gv[4];
        // Channels past the block's end reread the last one (never stored).
        [[unroll]] for (int r = 0; r < 4; ++r) gv[r] = float(dy[yo + uint(min(r, mcount - 1)) * plane]);
        [[unroll]] for (int t = 0; t < 9; ++t) {
          int ih = h0 + toh[t], iw = w0 + tow[t];
          if (t < tcount && ih >= 0 && ih < H && iw >= 0 && iw < W) {
            float xv = float(x[xb + uint(ih * W + iw)]);
            [[unroll]] for (int r = 0; r < 4; ++r) acc[r][t] += gv[r] * xv;
          }
        }
      }
    }
  }
  // Constant indices only, so the accumulators stay in registers.
  [[unroll]] for (int r = 0; r < 4; ++r)
    [[unroll]] for (int t = 0; t < 9; ++t)
      if (r < mcount && t < tcount)
        dw[pc.off[2] + uint(((m0 + r) * Cg + c) * taps + t0 + t)] = ST(acc[r][t]);
}
