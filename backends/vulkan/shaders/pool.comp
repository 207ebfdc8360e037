#version 450
// MaxPool / AveragePool (OP 0 max, 1 average), one thread per output.
// p: 0 planes (N*C), 1 H, 2 W, 3 OH, 4 OW, 5 kH, 6 kW, 7 sh, 8 sw, 9 pt,
//    10 pl, 11 pb, 12 pr, 13 count_include_pad.
// Same window rules as cpu_ref: padding never wins the max; with
// count_include_pad the divisor counts padding but not the part of a
// ceil_mode window beyond the bottom/right padding.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  int OH = p[3], OW = p[4];
  if (i >= uint(p[0] * OH * OW)) return;
  int ow = int(i % uint(OW)), oh = int((i / uint(OW)) % uint(OH));
  uint plane = i / uint(OH * OW);
  int h0 = oh * p[7] - p[9], w0 = ow * p[8] - p[10];
  int hs = max(h0, 0), he = min(h0 + p[5], p[1]);
  int ws = max(w0, 0), we = min(w0 + p[6], p[2]);
  uint base = pc.off[0] + plane * uint(p[1] * p[2]);
  if (OP == 0) {
    CT m = CT(x[base + uint(hs * p[2] + ws)]);
    for (int h = hs; h < he; ++h)
      for (int w = ws; w < we; ++w) m = max(m, CT(x[base + uint(h * p[2] + w)]));
    y[pc.off[1] + i] = ST(m);
  } else {
    float s = 0.0;
    for (int h = hs; h < he; ++h)
      for (int w = ws; w < we; ++w) s += float(x[base + uint(h * p[2] + w)]);
    int count = p[13] != 0
        ? (min(h0 + p[5], p[1] + p[11]) - h0) * (min(w0 + p[6], p[2] + p[12]) - w0)
        : (he - hs) * (we - ws);
    y[pc.off[1] + i] = ST(s / float(count));
  }
}
