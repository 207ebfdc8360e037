#version 450
// UpdateGuard, f32 only (docs/OPS.md, "Training ops"). One workgroup per
// dispatch over up to 5 gradients; a node with more gradients has several
// dispatches, run in order, that carry the running [finite, sum of squares]
// in the stats output; the last one writes hyper' and stats. Each invocation
// sums the squares of a strided slice in f32, the workgroup adds the 256
// partial sums in a fixed tree order, and the dispatches add theirs in input
// order: the result never depends on timing. Non-finite values are found
// from their exponent bits (no isnan/isinf a fast-math compiler may drop),
// so the finite flag and apply' are exact.
// p: 0 gradients in this dispatch (1..5), 1..5 their sizes, 6 first
// dispatch, 7 last dispatch, 8 clip_norm bits, 9 skip_nonfinite, 10 hyper
// length (3 or 5).
// Bindings: 1 stats (running state, then the result), 2 hyper, 3 hyper' (may
// be hyper's buffer), 4..8 the gradients (unused ones repeat a bound tensor).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) buffer S { float s[]; };
layout(std430, binding = 2) readonly buffer H { float h[]; };
layout(std430, binding = 3) writeonly buffer HO { float h_out[]; };
layout(std430, binding = 4) readonly buffer G0 { float g0[]; };
layout(std430, binding = 5) readonly buffer G1 { float g1[]; };
layout(std430, binding = 6) readonly buffer G2 { float g2[]; };
layout(std430, binding = 7) readonly buffer G3 { float g3[]; };
layout(std430, binding = 8) readonly buffer G4 { float g4[]; };

shared float red_sq[256];
shared uint red_bad[256];

float load(int j, uint i) {
  if (j == 0) return g0[pc.off[3] + i];
  if (j == 1) return g1[pc.off[4] + i];
  if (j == 2) return g2[pc.off[5] + i];
  if (j == 3) return g3[pc.off[6] + i];
  return g4[pc.off[7] + i];
}

void main() {
  uint t = gl_LocalInvocationID.x;
  float sq = 0.0;
  uint bad = 0u;
  for (int j = 0; j < p[0]; ++j) {
    uint n = uint(p[1 + j]);
    for (uint i = t; i < n; i += 256u) {
      float v = load(j, i);
      bad |= uint((floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u);
      sq += v * v;
    }
  }
  red_sq[t] = sq;
  red_bad[t] = bad;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (t < w) {
      red_sq[t] += red_sq[t + w];
      red_bad[t] |= red_bad[t + w];
    }
    barrier();
  }
  if (t != 0u) return;
  float total = red_sq[0];
  bool finite = red_bad[0] == 0u;
  if (p[6] == 0) {
    total = s[pc.off[0] + 1u] + total;
    finite = finite && s[pc.off[0]] != 0.0;
  }
  if (p[7] == 0) {
    s[pc.off[0]] = finite ? 1.0 : 0.0;
    s[pc.off[0] + 1u] = total;
    return;
  }
  float scale = h[pc.off[1] + 1u];
  float norm = finite ? sqrt(total) * scale : uintBitsToFloat(0x7f800000u);
  float hv[5];
  for (int k = 0; k < p[10]; ++k) hv[k] = h[pc.off[1] + uint(k)];
  float clip = pf(8);
  if (clip > 0.0 && finite) {
    // PyTorch's clip_grad_norm_: scale by clip / (norm + 1e-6) below 1.
    float coef = clip / (norm + 1e-6);
    if (coef < 1.0) hv[1] = scale * coef;
  }
  if (p[9] != 0 && !finite) hv[2] = 0.0;
  for (int k = 0; k < p[10]; ++k) h_out[pc.off[2] + uint(k)] = hv[k];
  s[pc.off[0]] = finite ? 1.0 : 0.0;
  s[pc.off[0] + 1u] = norm;
}
