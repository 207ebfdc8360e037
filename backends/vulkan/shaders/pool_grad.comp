#version 450
// MaxPoolGrad / AveragePoolGrad (OP 0 max, 1 average) without scatter: one
// invocation per input cell sums, in (oh, ow) order as cpu_ref, the
// gradients of the windows that cover it, so no atomics are needed. Max:
// a window's dY goes to its first maximum (its first NaN if any), found by
// rescanning the window; average: dY / count to every cell counted. Window
// rules as pool.comp. p: 0 planes (N*C), 1 H, 2 W, 3 OH, 4 OW, 5 kH, 6 kW,
// 7 sh, 8 sw, 9 pt, 10 pl, 11 pb, 12 pr, 13 count_include_pad.
// Bindings: 1 dY, 2 X (max; dY again for average), 3 dX.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer X { ST x[]; };
layout(std430, binding = 3) writeonly buffer DX { ST dx[]; };

// floor(a / b) for b > 0.
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  int H = p[1], W = p[2], OH = p[3], OW = p[4], kH = p[5], kW = p[6];
  int sh = p[7], sw = p[8], pt = p[9], pl = p[10];
  if (i >= uint(p[0] * H * W)) return;
  int w = int(i % uint(W)), h = int((i / uint(W)) % uint(H));
  uint plane = i / uint(H * W);
  uint xbase = pc.off[1] + plane * uint(H * W), ybase = pc.off[0] + plane * uint(OH * OW);
  // Windows oh with oh*sh - pt <= h < oh*sh - pt + kH.
  int oh0 = max(floor_div(h + pt - kH, sh) + 1, 0), oh1 = min(floor_div(h + pt, sh), OH - 1);
  int ow0 = max(floor_div(w + pl - kW, sw) + 1, 0), ow1 = min(floor_div(w + pl, sw), OW - 1);
  float acc = 0.0;
  for (int oh = oh0; oh <= oh1; ++oh) {
    for (int ow = ow0; ow <= ow1; ++ow) {
      int h0 = oh * sh - pt, w0 = ow * sw - pl;
      int hs = max(h0, 0), he = min(h0 + kH, H);
      int ws = max(w0, 0), we = min(w0 + kW, W);
      float g = float(dy[ybase + uint(oh * OW + ow)]);
      if (OP == 0) {
        int best = -1;
        float m = 0.0;
        bool done = false;
        for (int hh = hs; hh < he && !done; ++hh) {
          for (int ww = ws; ww < we; ++ww) {
            float v = float(x[xbase + uint(hh * W + ww)]);
            if (best < 0 || v > m || (isnan(v) && !isnan(m))) {
              m = v;
              best = hh * W + ww;
              if (isnan(v)) {
                done = true;
                break;
              }
            }
          }
        }
        if (best == h * W + w) acc += g;
      } else {
        int count = p[13] != 0
            ? (min(h0 + kH, H + p[11]) - h0) * (min(w0 + kW, W + p[12]) - w0)
            : (he - hs) * (we - ws);
        acc += g / float(count);
      }
    }
  }
  dx[pc.off[2] + i] = ST(acc);
}
