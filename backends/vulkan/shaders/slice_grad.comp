#version 450
// SliceGrad without scatter: one invocation per element of dX [input_shape];
// along each dim its coordinate x is read by the Slice iff
// x = start + k * step for some 0 <= k < dY's dim (steps may be negative),
// and then dX = dY[k...], else 0.
// p: 0 n, 1 rank, then per dim d (5 ints at 2 + 5d): dX dim, start, step,
// dY dim, dY stride.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) writeonly buffer DX { ST dx[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int rank = p[1];
  uint rest = i;
  int src = 0;
  bool hit = true;
  for (int d = rank - 1; d >= 0; --d) {
    int q = 2 + 5 * d;
    int c = int(rest % uint(p[q]));
    rest /= uint(p[q]);
    int diff = c - p[q + 1], step = p[q + 2];
    // diff / step as a non-negative exact quotient, without % on negatives.
    int ad = step > 0 ? diff : -diff, as = abs(step);
    if (ad < 0 || ad % as != 0 || ad / as >= p[q + 3]) {
      hit = false;
    } else {
      src += (ad / as) * p[q + 4];
    }
  }
  // Through f32 (exact both ways): selecting 16-bit values would need
  // Float16 arithmetic, which the f16s variant must not use.
  dx[pc.off[1] + i] = ST(hit ? float(dy[pc.off[0] + uint(src)]) : 0.0);
}
