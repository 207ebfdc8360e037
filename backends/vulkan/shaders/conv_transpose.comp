#version 450
// ConvTranspose (docs/OPS.md; a convolution's input gradient in a training
// step): one invocation per output element gathers what the scatter
// formulation would add to it, so no atomics and a fixed order: for each tap
// (kh, kw) whose input row ih = (oh + pt - kh*dh) / sh and column are whole
// and in range, the group's input channels in order. f32 accumulation, one
// rounding per output.
// W is [C, M/group, kH, kW].
// p: 0 N, 1 C, 2 H, 3 W, 4 M, 5 OH, 6 OW, 7 kH, 8 kW, 9 sh, 10 sw, 11 pt,
//    12 pl, 13 dh, 14 dw, 15 groups, 16 has_bias, 17 total outputs.
// Bindings: 1 X, 2 W, 3 bias (X when absent), 4 Y.
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
  uint Mg = uint(p[4] / p[15]), Cg = uint(p[1] / p[15]);
  uint g = oc / Mg, mo = oc - g * Mg;
  uint hw = uint(p[2] * p[3]), taps = uint(p[7] * p[8]);
  float acc = p[16] != 0 ? float(bias[pc.off[2] + oc]) : 0.0;
  uint xbase = pc.off[0] + (n * uint(p[1]) + g * Cg) * hw;
  uint wbase = pc.off[1] + (g * Cg * Mg + mo) * taps;
  for (int kh = 0; kh < p[7]; ++kh) {
    int th = int(oh) + p[11] - kh * p[13];
    if (th < 0 || th % p[9] != 0) continue;
    int ih = th / p[9];
    if (ih >= p[2]) continue;
    for (int kw = 0; kw < p[8]; ++kw) {
      int tw = int(ow) + p[12] - kw * p[14];
      if (tw < 0 || tw % p[10] != 0) continue;
      int iw = tw / p[10];
      if (iw >= p[3]) continue;
      uint xo = xbase + uint(ih * p[3] + iw), wo = wbase + uint(kh * p[8] + kw);
      for (uint c = 0u; c < Cg; ++c)
        acc = fma(float(x[xo + c * hw]), float(w[wo + c * Mg * taps]), acc);
    }
  }
  y[pc.off[3] + i] = ST(acc);
}
