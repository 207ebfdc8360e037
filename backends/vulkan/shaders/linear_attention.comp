#version 450
// LinearAttention (ONNX 27, docs/OPS.md), one invocation per column m of a
// (batch n, KV head h) state S [dk, dv]: every step of the recurrence reads
// and writes only column m, so a column walks the T tokens alone, in f32
// (the node's scratch buffer holds it: a 16-bit node keeps an f32 state, as
// cpu_ref's widened loop):
//   gated:  S[:, m] *= exp(g_t)           (per key row, or one per head)
//   delta:  v = β_t·(v_t[m] − Σ_i S[i, m]·k_t[i])  (the decayed S)
//   all:    S[:, m] += k_t·v
//   read:   o_t[j, m] = scale·Σ_i q_t[j, i]·S[i, m], each query head j of
//           KV head h. Sums in key order i, as cpu_ref.
// PHASE 0 widens past_state into the scratch state, 1 runs the tokens, 2
// rounds the state into present_state (three dispatches: the node has 8
// tensors with the scratch buffer, a dispatch binds at most 8).
// p: 0 columns (B·Hkv·dv), 1 T, 2 Hq, 3 Hkv, 4 dk, 5 dv, 6 gated, 7 delta,
//    8 decay per key row, 9 beta per head, 10 scale bits.
// Bindings: 1 query (PHASE 0: past_state), 2 key, 3 value, 4 decay, 5 beta
// (unused ones bound to the query), 6 the scratch state, 7 output (PHASE 2:
// present_state).
#include "common.glsl"
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint PHASE = 1;
layout(std430, binding = 1) readonly buffer Q { ST q[]; };
layout(std430, binding = 2) readonly buffer K { ST k[]; };
layout(std430, binding = 3) readonly buffer V { ST v[]; };
layout(std430, binding = 4) readonly buffer G { ST g[]; };
layout(std430, binding = 5) readonly buffer Bt { ST bt[]; };
layout(std430, binding = 6) buffer St { float st[]; };
layout(std430, binding = 7) writeonly buffer Y { ST y[]; };

void main() {
  uint col = linear_group() * 64u + gl_LocalInvocationID.x;
  if (col >= uint(p[0])) return;
  uint T = uint(p[1]), Hq = uint(p[2]), Hkv = uint(p[3]), dk = uint(p[4]), dv = uint(p[5]);
  uint m = col % dv, nh = col / dv, h = nh % Hkv, n = nh / Hkv;
  uint s0 = pc.off[5] + col * dk;              // S[:, m], contiguous
  uint state = (nh * dk) * dv + m;             // S[i, m] of past/present: + i·dv
  if (PHASE == 0u) {
    for (uint i = 0u; i < dk; ++i) st[s0 + i] = float(q[pc.off[0] + state + i * dv]);
    return;
  }
  if (PHASE == 2u) {
    for (uint i = 0u; i < dk; ++i) y[pc.off[6] + state + i * dv] = ST(st[s0 + i]);
    return;
  }
  bool gated = p[6] != 0, delta = p[7] != 0, per_key = p[8] != 0, per_head = p[9] != 0;
  float scale = pf(10);
  uint group = Hq / Hkv;
  for (uint t = 0u; t < T; ++t) {
    uint row = n * T + t;  // the token's row of the packed inputs
    uint kt = pc.off[1] + (row * Hkv + h) * dk;
    if (gated) {
      uint gt = pc.off[3] + row * (per_key ? Hkv * dk : Hkv) + (per_key ? h * dk : h);
      for (uint i = 0u; i < dk; ++i) st[s0 + i] *= exp(float(g[gt + (per_key ? i : 0u)]));
    }
    float vt = float(v[pc.off[2] + (row * Hkv + h) * dv + m]);
    if (delta) {
      float b = float(bt[pc.off[4] + row * (per_head ? Hkv : 1u) + (per_head ? h : 0u)]);
      float got = 0.0;
      for (uint i = 0u; i < dk; ++i) got += st[s0 + i] * float(k[kt + i]);
      vt = b * (vt - got);
    }
    for (uint i = 0u; i < dk; ++i) st[s0 + i] += float(k[kt + i]) * vt;
    for (uint j = h * group; j < (h + 1u) * group; ++j) {
      uint qt = pc.off[0] + (row * Hq + j) * dk;
      float acc = 0.0;
      for (uint i = 0u; i < dk; ++i) acc += float(q[qt + i]) * st[s0 + i];
      y[pc.off[6] + (row * Hq + j) * dv + m] = ST(scale * acc);
    }
  }
}
