#version 450
// LayerNormGrad over rows of L trailing elements, statistics recomputed
// from X (mean, then the variance of the deviations, f32).
// MODE 0, a workgroup per row: with xhat = (x - mean) * inv and
// g = dY * scale, dX = inv * (g - mean(g) - xhat * mean(g * xhat)).
// MODE 1, a workgroup per 64 columns: each row's statistics are reduced by
// the workgroup, then each invocation accumulates its column over the rows
// in order: dScale = sum dY * xhat, dBias = sum dY.
// p: 0 rows, 1 L, 2 eps bits. Bindings: 1 dY, 2 X, 3 scale, 4 dX (MODE 0)
// or dScale (MODE 1), 5 dBias (MODE 1; dX in MODE 0, unused).
#include "common.glsl"
layout(local_size_x = 64) in;
layout(constant_id = 0) const int MODE = 0;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer X { ST x[]; };
layout(std430, binding = 3) readonly buffer S { ST sc[]; };
layout(std430, binding = 4) writeonly buffer O1 { ST o1[]; };
layout(std430, binding = 5) writeonly buffer O2 { ST o2[]; };
#include "reduce64.glsl"

// mean and 1/sqrt(var + eps) of row r, reduced by the whole workgroup.
vec2 row_stats(uint r, uint L) {
  uint t = gl_LocalInvocationID.x, base = pc.off[1] + r * L;
  float s = 0.0;
  for (uint j = t; j < L; j += 64u) s += float(x[base + j]);
  float mean = reduce_sum64(s) / float(L);
  float q = 0.0;
  for (uint j = t; j < L; j += 64u) {
    float d = float(x[base + j]) - mean;
    q += d * d;
  }
  return vec2(mean, 1.0 / sqrt(reduce_sum64(q) / float(L) + pf(2)));
}

void main() {
  uint rows = uint(p[0]), L = uint(p[1]), t = gl_LocalInvocationID.x;
  uint grp = linear_group();
  if (MODE == 0) {
    if (grp >= rows) return;  // uniform per workgroup: barriers stay legal
    vec2 st = row_stats(grp, L);
    uint base = grp * L;
    float sg = 0.0, sgx = 0.0;
    for (uint j = t; j < L; j += 64u) {
      float g = float(dy[pc.off[0] + base + j]) * float(sc[pc.off[2] + j]);
      sg += g;
      sgx += g * (float(x[pc.off[1] + base + j]) - st.x) * st.y;
    }
    float mg = reduce_sum64(sg) / float(L), mgx = reduce_sum64(sgx) / float(L);
    for (uint j = t; j < L; j += 64u) {
      float xhat = (float(x[pc.off[1] + base + j]) - st.x) * st.y;
      float g = float(dy[pc.off[0] + base + j]) * float(sc[pc.off[2] + j]);
      o1[pc.off[3] + base + j] = ST(st.y * (g - mg - xhat * mgx));
    }
    return;
  }
  if (grp * 64u >= L) return;
  uint j = grp * 64u + t;
  float ds = 0.0, db = 0.0;
  for (uint r = 0u; r < rows; ++r) {
    vec2 st = row_stats(r, L);
    if (j < L) {
      float g = float(dy[pc.off[0] + r * L + j]);
      ds += g * (float(x[pc.off[1] + r * L + j]) - st.x) * st.y;
      db += g;
    }
  }
  if (j < L) {
    o1[pc.off[3] + j] = ST(ds);
    o2[pc.off[4] + j] = ST(db);
  }
}
