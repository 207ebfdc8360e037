#version 450
// MaxPoolIndices: one thread per output, where MaxPool's maximum is, as the
// flat i64 index into X (written as two 32-bit words: low, then high = 0;
// X fits the kernels' 32-bit indexing). cpu_ref's rules: the window's taps
// walked row-major, the first maximum wins (strictly greater replaces), the
// first NaN wins over any number and ends the walk; padding taps are never
// read. Comparisons in f32: exact for every variant.
// p: pool_params (0 planes, 1 H, 2 W, 3 OH, 4 OW, 5 kH, 6 kW, 7 sh, 8 sw,
//    9 pt, 10 pl, 11 pb, 12 pr, 13 unused), 14 dh, 15 dw, 16 storage_order.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

// The taps w0, w0 + d, ... of a k-tap window inside [0, n): the first one
// and one past the last one (cpu_ref's pool_taps; first >= end: none).
ivec2 taps(int w0, int k, int d, int n) {
  int skip = w0 >= 0 ? 0 : (-w0 + d - 1) / d;
  int last = min(k, n > w0 ? (n - w0 + d - 1) / d : 0);
  int first = w0 + skip * d;
  return ivec2(first, first + max(last - skip, 0) * d);
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  int H = p[1], W = p[2], OH = p[3], OW = p[4], dh = p[14], dw = p[15];
  if (i >= uint(p[0] * OH * OW)) return;
  int ow = int(i % uint(OW)), oh = int((i / uint(OW)) % uint(OH));
  uint plane = i / uint(OH * OW);
  ivec2 th = taps(oh * p[7] - p[9], p[5], dh, H), tw = taps(ow * p[8] - p[10], p[6], dw, W);
  uint base = pc.off[0] + plane * uint(H * W);
  // A dilated window can hold no cell of X although its extent overlaps the
  // input (H = 1, kH = 2, dh = 3, pads 2 and 1): no cell, index -1.
  if (th.x >= th.y || tw.x >= tw.y) {
    y[pc.off[1] + 2u * i] = 0xffffffffu;
    y[pc.off[1] + 2u * i + 1u] = 0xffffffffu;
    return;
  }
  int bh = th.x, bw = tw.x;
  float m = float(x[base + uint(bh * W + bw)]);
  for (int h = th.x; h < th.y && !isnan(m); h += dh) {
    for (int w = tw.x; w < tw.y; w += dw) {
      float v = float(x[base + uint(h * W + w)]);
      if (v > m || isnan(v)) {
        m = v;
        bh = h;
        bw = w;
        if (isnan(v)) break;
      }
    }
  }
  uint cell = p[16] != 0 ? uint(bw * H + bh) : uint(bh * W + bw);
  y[pc.off[1] + 2u * i] = plane * uint(H * W) + cell;
  y[pc.off[1] + 2u * i + 1u] = 0u;
}
