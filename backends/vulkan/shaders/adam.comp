#version 450
// AdamUpdate, f32 only (docs/OPS.md): hyper = lr, grad_scale, apply,
// bc1 = 1 - beta1^t, bc2 = 1 - beta2^t. g = G * grad_scale (+ wd W unless
// decoupled); M' = b1 M + (1 - b1) g; V' = b2 V + (1 - b2) g^2;
// W' = W (decoupled ? 1 - lr wd : 1) - lr / bc1 M' / (sqrt(V') / sqrt(bc2) + eps),
// in cpu_ref's order of operations. apply == 0 copies W, M, V unchanged.
// In place safe: each invocation reads its elements before writing them.
// p: 0 n, 1 beta1 bits, 2 beta2 bits, 3 epsilon bits, 4 weight_decay bits,
// 5 decoupled. Bindings: 1 W, 2 G, 3 M, 4 V, 5 hyper, 6 W', 7 M', 8 V'.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer G { float g[]; };
layout(std430, binding = 3) readonly buffer M { float m[]; };
layout(std430, binding = 4) readonly buffer V { float v[]; };
layout(std430, binding = 5) readonly buffer H { float h[]; };
layout(std430, binding = 6) writeonly buffer WO { float w_out[]; };
layout(std430, binding = 7) writeonly buffer MO { float m_out[]; };
layout(std430, binding = 8) writeonly buffer VO { float v_out[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  float wi = w[pc.off[0] + i], mi = m[pc.off[2] + i], vi = v[pc.off[3] + i];
  uint hb = pc.off[4];
  float lr = h[hb], scale = h[hb + 1u];
  if (h[hb + 2u] == 0.0) {
    w_out[pc.off[5] + i] = wi;
    m_out[pc.off[6] + i] = mi;
    v_out[pc.off[7] + i] = vi;
    return;
  }
  float b1 = pf(1), b2 = pf(2), eps = pf(3), wd = pf(4);
  bool decoupled = p[5] != 0;
  float step = lr / h[hb + 3u], inv_sqrt_bc2 = 1.0 / sqrt(h[hb + 4u]);
  float decay = decoupled ? 1.0 - lr * wd : 1.0;
  float gi = g[pc.off[1] + i] * scale;
  if (!decoupled) gi += wd * wi;
  mi = b1 * mi + (1.0 - b1) * gi;
  vi = b2 * vi + (1.0 - b2) * gi * gi;
  m_out[pc.off[6] + i] = mi;
  v_out[pc.off[7] + i] = vi;
  w_out[pc.off[5] + i] = wi * decay - step * mi / (sqrt(vi) * inv_sqrt_bc2 + eps);
}
