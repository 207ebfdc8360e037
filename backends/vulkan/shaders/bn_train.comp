#version 450
// BatchNormTraining over X [N, C, inner] (docs/OPS.md): a workgroup per
// channel computes the batch mean and the population variance of its
// N * inner values (two passes, f32, fixed-order reductions), then
// MODE 0: Y = (X - mean) * invstd * scale + bias, saved_mean, saved_invstd;
// MODE 1: running' = momentum * running + (1 - momentum) * batch.
// Two dispatches because the node has ten tensors; each recomputes the
// statistics from X, so neither reads a 16-bit rounded intermediate.
// p: 0 N, 1 C, 2 inner, 3 eps bits, 4 momentum bits.
// Bindings, MODE 0: 1 X, 2 scale, 3 bias, 4 Y, 5 saved_mean, 6 saved_invstd;
// MODE 1: 1 X, 2 running_mean, 3 running_var, 4 running_mean' (unused),
// 5 running_mean', 6 running_var'.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(constant_id = 0) const int MODE = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer A { ST a[]; };
layout(std430, binding = 3) readonly buffer B { ST b[]; };
layout(std430, binding = 4) writeonly buffer Y { ST y[]; };
layout(std430, binding = 5) writeonly buffer O1 { ST o1[]; };
layout(std430, binding = 6) writeonly buffer O2 { ST o2[]; };
#include "reduce64.glsl"

void main() {
  uint ch = linear_group();
  uint N = uint(p[0]), C = uint(p[1]), inner = uint(p[2]);
  if (ch >= C) return;  // uniform per workgroup: barriers stay legal
  uint t = gl_LocalInvocationID.x, cnt = N * inner;
  float s = 0.0;
  for (uint k = t; k < cnt; k += 64u)
    s += float(x[pc.off[0] + ((k / inner) * C + ch) * inner + k % inner]);
  float mean = cnt > 0u ? reduce_sum64(s) / float(cnt) : 0.0;
  float q = 0.0;
  for (uint k = t; k < cnt; k += 64u) {
    float d = float(x[pc.off[0] + ((k / inner) * C + ch) * inner + k % inner]) - mean;
    q += d * d;
  }
  float var = cnt > 0u ? reduce_sum64(q) / float(cnt) : 0.0;
  if (MODE == 0) {
    float invstd = 1.0 / sqrt(var + pf(3));
    float sc = float(a[pc.off[1] + ch]) * invstd, bi = float(b[pc.off[2] + ch]);
    for (uint k = t; k < cnt; k += 64u) {
      uint e = ((k / inner) * C + ch) * inner + k % inner;
      y[pc.off[3] + e] = ST((float(x[pc.off[0] + e]) - mean) * sc + bi);
    }
    if (t == 0u) {
      o1[pc.off[4] + ch] = ST(mean);
      o2[pc.off[5] + ch] = ST(invstd);
    }
  } else if (t == 0u) {
    float mom = pf(4);
    o1[pc.off[4] + ch] = ST(mom * float(a[pc.off[1] + ch]) + (1.0 - mom) * mean);
    o2[pc.off[5] + ch] = ST(mom * float(b[pc.off[2] + ch]) + (1.0 - mom) * var);
  }
}
