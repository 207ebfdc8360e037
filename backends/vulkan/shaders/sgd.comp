#version 450
// SgdUpdate, f32 only (docs/OPS.md): hyper = lr, grad_scale, apply.
// g = G * grad_scale + wd * W; with momentum M' = mu M + g and
// W' = W - lr (nesterov ? g + mu M' : M'), else W' = W - lr g. apply == 0
// copies W (and M) unchanged. In place safe: the outputs may be the buffers
// of W and M; each invocation reads its element before writing it.
// p: 0 n, 1 momentum bits, 2 nesterov, 3 weight_decay bits, 4 has_m.
// Bindings: 1 W, 2 G, 3 hyper, 4 M (W without momentum), 5 W', 6 M' (W'
// without momentum, never written then).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer G { float g[]; };
layout(std430, binding = 3) readonly buffer H { float h[]; };
layout(std430, binding = 4) readonly buffer M { float m[]; };
layout(std430, binding = 5) writeonly buffer WO { float w_out[]; };
layout(std430, binding = 6) writeonly buffer MO { float m_out[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  bool has_m = p[4] != 0;
  float wi = w[pc.off[0] + i];
  float lr = h[pc.off[2]], scale = h[pc.off[2] + 1u];
  if (h[pc.off[2] + 2u] == 0.0) {
    float mi = has_m ? m[pc.off[3] + i] : 0.0;
    w_out[pc.off[4] + i] = wi;
    if (has_m) m_out[pc.off[5] + i] = mi;
    return;
  }
  float mu = pf(1);
  float gi = g[pc.off[1] + i] * scale + pf(3) * wi;
  float d = gi;
  if (has_m) {
    float mi = mu * m[pc.off[3] + i] + gi;
    m_out[pc.off[5] + i] = mi;
    d = p[2] != 0 ? gi + mu * mi : mi;
  }
  w_out[pc.off[4] + i] = wi - lr * d;
}
