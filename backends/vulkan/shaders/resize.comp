#version 450
// Resize of the last two axes (H, W) of [planes, H, W], as cpu_ref: per
// output row and column the host gives the two source indices and the
// weight of the second (nearest: one index twice, weight 0); the output is
// top + wy (bottom - top), top and bottom interpolated along W, in f32.
// p: 0 n (output elements), 1 H, 2 W, 3 OH, 4 OW, then per output row
//    i0, i1, w1 (f32 bits) [3 * OH], then per output column the same [3 * OW].
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint H = uint(p[1]), W = uint(p[2]), OH = uint(p[3]), OW = uint(p[4]);
  uint ox = i % OW, oy = (i / OW) % OH, plane = i / (OW * OH);
  int ry = 5 + 3 * int(oy), rx = 5 + 3 * int(OH) + 3 * int(ox);
  uint base = pc.off[0] + plane * H * W;
  uint r0 = base + uint(p[ry]) * W, r1 = base + uint(p[ry + 1]) * W;
  uint a = uint(p[rx]), b = uint(p[rx + 1]);
  float wy = pf(ry + 2), wx = pf(rx + 2);
  float t0 = float(x[r0 + a]), t1 = float(x[r0 + b]);
  float b0 = float(x[r1 + a]), b1 = float(x[r1 + b]);
  float top = t0 + wx * (t1 - t0);
  float bot = b0 + wx * (b1 - b0);
  y[pc.off[1] + i] = ST(top + wy * (bot - top));
}
