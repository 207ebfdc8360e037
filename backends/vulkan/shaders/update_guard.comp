#version 450
// UpdateGuard, pass 2 of 2, f32 only (docs/OPS.md, "Training ops"). One
// workgroup adds the slots update_guard_partial wrote: each invocation a
// strided run of slots in slot order, then a fixed tree, so the sum of
// squares and the finite flag never depend on timing (the flag is exact).
// It then writes hyper' (clipping folded into grad_scale, apply cleared on
// a non-finite gradient) and the stats [finite, norm].
// p: 0 slots, 1 clip_norm bits, 2 skip_nonfinite, 3 hyper length (3 or 5).
// Bindings: 1 stats, 2 hyper, 3 hyper' (may be hyper's buffer), 4 scratch.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) writeonly buffer S { float s[]; };
layout(std430, binding = 2) readonly buffer H { float h[]; };
layout(std430, binding = 3) writeonly buffer HO { float h_out[]; };
layout(std430, binding = 4) readonly buffer W { uint w[]; };

shared float red_sq[256];
shared uint red_bad[256];

void main() {
  uint t = gl_LocalInvocationID.x;
  float sq = 0.0;
  uint bad = 0u;
  for (uint i = t; i < uint(p[0]); i += 256u) {
    uint slot = pc.off[3] + i * 2u;
    sq += uintBitsToFloat(w[slot]);
    bad |= w[slot + 1u];
  }
  red_sq[t] = sq;
  red_bad[t] = bad;
  barrier();
  for (uint k = 128u; k > 0u; k >>= 1) {
    if (t < k) {
      red_sq[t] += red_sq[t + k];
      red_bad[t] |= red_bad[t + k];
    }
    barrier();
  }
  if (t != 0u) return;
  float total = red_sq[0];
  bool finite = red_bad[0] == 0u;
  float scale = h[pc.off[1] + 1u];
  float norm = finite ? sqrt(total) * scale : uintBitsToFloat(0x7f800000u);
  float hv[5];
  for (int k = 0; k < p[3]; ++k) hv[k] = h[pc.off[1] + uint(k)];
  float clip = pf(1);
  if (clip > 0.0 && finite) {
    // PyTorch's clip_grad_norm_: scale by clip / (norm + 1e-6) below 1.
    float coef = clip / (norm + 1e-6);
    if (coef < 1.0) hv[1] = scale * coef;
  }
  if (p[2] != 0 && !finite) hv[2] = 0.0;
  for (int k = 0; k < p[3]; ++k) h_out[pc.off[2] + uint(k)] = hv[k];
  s[pc.off[0]] = finite ? 1.0 : 0.0;
  s[pc.off[0] + 1u] = norm;
}
