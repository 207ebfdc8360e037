#version 450
// Conv2dGradWeight: dW[m, c, ki, kj] = sum over n, oh, ow of
// dY[n, m, oh, ow] * X[n, g*Cg + c, oh*sh - pt + ki*dh, ow*sw - pl + kj*dw]
// (g = m / Mg), one invocation per weight element with an f32 accumulator
// in a fixed order; the output rows/columns whose tap falls in the padding
// are skipped by range, not by branches in the loop.
// p: 0 N, 1 C, 2 H, 3 W, 4 M, 5 Cg, 6 Mg, 7 kH, 8 kW, 9 OH, 10 OW, 11 sh,
//    12 sw, 13 pt, 14 pl, 15 dh, 16 dw. Bindings: 1 dY, 2 X, 3 dW.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer X { ST x[]; };
layout(std430, binding = 3) writeonly buffer DW { ST dw[]; };

int ceil_div(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Output indices o in [lo, hi) whose input o*s - p + off lies in [0, size).
void valid(int size, int osize, int s, int pad, int off, out int lo, out int hi) {
  lo = clamp(ceil_div(pad - off, s), 0, osize);
  hi = clamp(floor_div(size - 1 + pad - off, s) + 1, lo, osize);
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  int N = p[0], C = p[1], H = p[2], W = p[3], M = p[4], Cg = p[5], Mg = p[6];
  int kH = p[7], kW = p[8], OH = p[9], OW = p[10];
  int sh = p[11], sw = p[12], pt = p[13], pl = p[14], dh = p[15], dwl = p[16];
  if (i >= uint(M * Cg * kH * kW)) return;
  // Invocation i takes the taps slowest and the channels fastest, so the
  // neighbouring invocations a SIMD group runs share (ki, kj): the same
  // loop bounds, no divergence.
  int c = int(i % uint(Cg));
  int m = int((i / uint(Cg)) % uint(M));
  int kj = int((i / uint(Cg * M)) % uint(kW));
  int ki = int(i / uint(Cg * M * kW));
  int ci = (m / Mg) * Cg + c;
  int oh0, oh1, ow0, ow1;
  valid(H, OH, sh, pt, ki * dh, oh0, oh1);
  valid(W, OW, sw, pl, kj * dwl, ow0, ow1);
  float acc = 0.0;
  for (int n = 0; n < N; ++n) {
    uint yb = pc.off[0] + uint((n * M + m) * OH * OW);
    uint xb = pc.off[1] + uint((n * C + ci) * H * W);
    for (int oh = oh0; oh < oh1; ++oh) {
      int hi = oh * sh - pt + ki * dh;
      for (int ow = ow0; ow < ow1; ++ow)
        acc += float(dy[yb + uint(oh * OW + ow)]) *
               float(x[xb + uint(hi * W + ow * sw - pl + kj * dwl)]);
    }
  }
  dw[pc.off[2] + uint(((m * Cg + c) * kH + ki) * kW + kj)] = ST(acc);
}
