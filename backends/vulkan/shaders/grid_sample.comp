#version 450
// GridSample (ONNX 20) over k <= MAXK spatial axes: one invocation per
// output element (n, c, point), f32 arithmetic in every variant, cpu_ref's
// steps in its order: each axis' grid component (the last one is the last
// axis) denormalised with one rounding (fma: cpu_ref computes it in f64 and
// rounds to f32 once), rounded half to even (nearest), moved inside by the
// padding mode, then 1, 2 or 4 taps per axis (cubic a = -0.75), each read
// through the padding mode; the weight of a tap is the product of its axes'
// weights from the last axis to the first, accumulated in tap order.
// p: 0 outputs (N * C * points), 1 C, 2 points, 3 k, 4 mode (0 nearest,
//    1 linear, 2 cubic), 5 padding (0 zeros, 1 border, 2 reflection),
//    6 align_corners, 7 + a: D_a (a < k).
#include "common.glsl"
#define MAXK 6
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer G { ST grid[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };

// x reflected about [lo, hi] until inside (cpu_ref's reflect, ONNX's
// _gs_reflect); a zero-width range (one pixel, align_corners) gives lo.
float reflect_into(float v, float lo, float hi) {
  float range = hi - lo;
  if (range <= 0.0) return lo;
  if (v < lo) {
    float dx = lo - v, n = floor(dx / range), r = dx - n * range;
    return mod(n, 2.0) == 0.0 ? lo + r : hi - r;
  }
  if (v > hi) {
    float dx = v - hi, n = floor(dx / range), r = dx - n * range;
    return mod(n, 2.0) == 0.0 ? hi - r : lo + r;
  }
  return v;
}

float cubic(float t) {
  const float a = -0.75;
  t = abs(t);
  if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  int C = p[1], points = p[2], k = p[3], mode = p[4], padding = p[5];
  bool align = p[6] != 0;
  uint pt = i % uint(points), nc = i / uint(points), n = nc / uint(C);
  uint g = pc.off[1] + (n * uint(points) + pt) * uint(k);
  int first[MAXK];
  float w[MAXK * 4];
  int plane = 1;
  for (int a = 0; a < k; ++a) {
    int D = p[7 + a];
    plane *= D;
    float d = float(D), nv = float(grid[g + uint(k - 1 - a)]);
    float lo = align ? 0.0 : -0.5, hi = align ? d - 1.0 : d - 0.5;
    // (nv + 1) / 2 * (d - 1) or ((nv + 1) * d - 1) / 2 with one rounding:
    // the halving is exact.
    float c = align ? fma(nv, d - 1.0, d - 1.0) * 0.5 : fma(nv, d, d - 1.0) * 0.5;
    if (mode == 0) c = roundEven(c);
    if (c < lo || c > hi) {
      if (padding == 1) c = clamp(c, 0.0, d - 1.0);
      if (padding == 2) c = reflect_into(c, lo, hi);
    }
    if (mode == 0) {
      first[a] = int(c);  // truncation, as cpu_ref's cast
      w[a * 4] = 1.0;
      continue;
    }
    float f = floor(c), r = c - f;
    if (mode == 1) {
      first[a] = int(f);
      w[a * 4] = 1.0 - r;
      w[a * 4 + 1] = r;
    } else {
      first[a] = int(f) - 1;
      w[a * 4] = cubic(r + 1.0);
      w[a * 4 + 1] = cubic(r);
      w[a * 4 + 2] = cubic(1.0 - r);
      w[a * 4 + 3] = cubic(2.0 - r);
    }
  }
  int taps1 = mode == 0 ? 1 : mode == 1 ? 2 : 4, taps = 1;
  for (int a = 0; a < k; ++a) taps *= taps1;
  uint base = pc.off[0] + nc * uint(plane);
  float acc = 0.0;
  for (int tap = 0; tap < taps; ++tap) {
    float weight = 1.0;
    int rest = tap, offset = 0, stride = 1;
    bool zero = false;
    for (int a = k - 1; a >= 0; --a) {
      int j = rest % taps1, D = p[7 + a];
      rest /= taps1;
      weight *= w[a * 4 + j];
      int at = first[a] + j;
      if (at < 0 || at >= D) {
        if (padding == 0) zero = true;
        if (padding == 2) {
          float lo = align ? 0.0 : -0.5, hi = align ? float(D) - 1.0 : float(D) - 0.5;
          at = int(reflect_into(float(at), lo, hi));
        }
        at = clamp(at, 0, D - 1);
      }
      offset += at * stride;
      stride *= D;
    }
    if (!zero) acc += weight * float(x[base + uint(offset)]);
  }
  y[pc.off[2] + i] = ST(acc);
}
