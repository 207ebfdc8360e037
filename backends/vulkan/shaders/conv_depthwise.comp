#version 450
// Depthwise Conv2d (one input channel per group, any channel multiplier):
// one thread per output element, the window summed directly; a GEMM tile
// would be mostly padding here.
// p: 0 N, 1 C, 2 H, 3 W, 4 M, 5 OH, 6 OW, 7 kH, 8 kW, 9 sh, 10 sw, 11 pt,
//    12 pl, 13 dh, 14 dw, 15 groups, 16 has_bias, 17 total outputs.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer Wt { ST w[]; };
layout(std430, binding = 3) readonly buffer Bias { ST bias[]; };
layout(std430, binding = 4) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[17])) return;
  uint ow = i % uint(p[6]), t = i / uint(p[6]);
  uint oh = t % uint(p[5]);
  t /= uint(p[5]);
  uint oc = t % uint(p[4]), n = t / uint(p[4]);
  uint ic = oc / uint(p[4] / p[15]);
  float acc = p[16] != 0 ? float(bias[pc.off[2] + oc]) : 0.0;
  uint xbase = pc.off[0] + (n * uint(p[1]) + ic) * uint(p[2] * p[3]);
  uint wbase = pc.off[1] + oc * uint(p[7] * p[8]);
  for (int kh = 0; kh < p[7]; ++kh) {
    int ih = int(oh) * p[9] - p[11] + kh * p[13];
    if (ih < 0 || ih >= p[2]) continue;
    for (int kw = 0; kw < p[8]; ++kw) {
      int iw = int(ow) * p[10] - p[12] + kw * p[14];
      if (iw < 0 || iw >= p[3]) continue;
      acc = fma(float(x[xbase + uint(ih * p[3] + iw)]), float(w[wbase + uint(kh * p[8] + kw)]), acc);
    }
  }
  y[pc.off[3] + i] = ST(acc);
}
