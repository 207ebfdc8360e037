#version 450
// BatchNormGrad over X [N, C, inner], a workgroup per channel:
// dBias = sum dY, dScale = sum dY * xhat (fixed-order f32 reductions),
// dX = scale * invstd / n * (n * dY - dBias - xhat * dScale), with
// xhat = (X - saved_mean) * saved_invstd. p: 0 N, 1 C, 2 inner.
// Bindings: 1 dY, 2 X, 3 scale, 4 saved_mean, 5 saved_invstd, 6 dX,
// 7 dScale, 8 dBias.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer X { ST x[]; };
layout(std430, binding = 3) readonly buffer S { ST sc[]; };
layout(std430, binding = 4) readonly buffer Mu { ST mu[]; };
layout(std430, binding = 5) readonly buffer Is { ST is[]; };
layout(std430, binding = 6) writeonly buffer DX { ST dx[]; };
layout(std430, binding = 7) writeonly buffer DS { ST dsc[]; };
layout(std430, binding = 8) writeonly buffer DB { ST dbi[]; };
#include "reduce64.glsl"

void main() {
  uint ch = linear_group();
  uint N = uint(p[0]), C = uint(p[1]), inner = uint(p[2]);
  if (ch >= C) return;  // uniform per workgroup: barriers stay legal
  uint t = gl_LocalInvocationID.x, cnt = N * inner;
  float m = float(mu[pc.off[3] + ch]), inv = float(is[pc.off[4] + ch]);
  float sb = 0.0, ss = 0.0;
  for (uint k = t; k < cnt; k += 64u) {
    uint e = ((k / inner) * C + ch) * inner + k % inner;
    float g = float(dy[pc.off[0] + e]);
    sb += g;
    ss += g * ((float(x[pc.off[1] + e]) - m) * inv);
  }
  float db = reduce_sum64(sb), ds = reduce_sum64(ss);
  float n = float(cnt);
  float k = cnt > 0u ? float(sc[pc.off[2] + ch]) * inv / n : 0.0;
  for (uint j = t; j < cnt; j += 64u) {
    uint e = ((j / inner) * C + ch) * inner + j % inner;
    float xhat = (float(x[pc.off[1] + e]) - m) * inv;
    dx[pc.off[5] + e] = ST(k * (n * float(dy[pc.off[0] + e]) - db - xhat * ds));
  }
  if (t == 0u) {
    dsc[pc.off[6] + ch] = ST(ds);
    dbi[pc.off[7] + ch] = ST(db);
  }
}
