#version 450
// Elementwise gradients dX = dY * f'(T), T being X or the forward output Y:
// OP 0 ReluGrad (X > 0 ? dY : 0, NaN gives 0), 1 SigmoidGrad (dY Y (1 - Y)),
// 2 TanhGrad (dY (1 - Y^2)), 3 GeluGrad erf form, 4 GeluGrad tanh form,
// 5 ClipGrad (min <= X <= max ? dY : 0, bounds pass). f32 arithmetic in
// every variant, one rounding on store, as cpu_ref.
// p: 0 n, 1 clip min bits, 2 clip max bits. Bindings: 1 dY, 2 T, 3 dX.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer T { ST tv[]; };
layout(std430, binding = 3) writeonly buffer DX { ST dx[]; };

#include "erf.glsl"

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  float g = float(dy[pc.off[0] + i]), t = float(tv[pc.off[1] + i]), r;
  if (OP == 0) {
    r = t > 0.0 ? g : 0.0;
  } else if (OP == 1) {
    r = g * t * (1.0 - t);
  } else if (OP == 2) {
    r = g * (1.0 - t * t);
  } else if (OP == 3) {
    // d/dx x Phi(x) = Phi(x) + x phi(x)
    r = g * (0.5 * (1.0 + erf_approx(t * 0.70710678118654752)) +
             t * 0.39894228040143268 * exp(-0.5 * t * t));
  } else if (OP == 4) {
    const float k = 0.79788456080286536;
    float th = safe_tanh(k * (t + 0.044715 * t * t * t));
    r = g * (0.5 * (1.0 + th) + 0.5 * t * (1.0 - th * th) * k * (1.0 + 3.0 * 0.044715 * t * t));
  } else {
    r = t >= pf(1) && t <= pf(2) ? g : 0.0;
  }
  dx[pc.off[2] + i] = ST(r);
}
