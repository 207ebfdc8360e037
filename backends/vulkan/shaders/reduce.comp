#version 450
// ReduceSum / ReduceMean / GlobalAveragePool and the ONNX reductions in f32,
// visiting the reduced elements in input order, as cpu_ref. OP: 0 sum,
// 1 mean, 2 max, 3 min, 4 prod, 5 L2 (sqrt of the sum of squares), 6 sum of
// squares, 7 log-sum-exp (the maximum subtracted: m + log(sum(exp(x - m)));
// m itself when it is infinite). Max and min: NaN, once seen, stays.
// MODE 0: one thread per output element walks all its reduced elements.
// Reductions longer than the driver's loop budget (llvmpipe ends an
// invocation's loops after 65,535 passes, silently) run in two dispatches:
// MODE 1, one thread per (output, chunk of CH reduced elements) writes its
// chunk's partial (sum, product, max or min; log-sum-exp: max and the sum of
// exp(x - max)) to the node's scratch buffer, two floats per slot; MODE 2,
// one thread per output combines its chunks in chunk order and finishes.
// p: 0 outputs, 1 reduced count, 2 nk, 3 nr, then kept dims[nk],
//    kept strides[nk], reduced dims[nr], reduced strides[nr] (input strides),
//    then the chunk size CH and the chunk count (MODE 1, 2).
// Bindings: 1 x, 2 y, 3 scratch (modes 1, 2; mode 0 binds x there, unused).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(constant_id = 1) const int MODE = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };
layout(std430, binding = 3) buffer S { float sp[]; };

// Input offset of reduced element r of the output element at `base`.
uint at(uint base, uint r) {
  int nk = p[2], nr = p[3];
  int rd = 4 + 2 * nk;
  uint rr = r, off = base;
  for (int d = nr - 1; d >= 0; --d) {
    uint dim = uint(p[rd + d]);
    off += (rr % dim) * uint(p[rd + nr + d]);
    rr /= dim;
  }
  return pc.off[0] + off;
}

// max (OP 2, 7) or min (OP 3) with NaN sticky, as cpu_ref.
float pick(float s, float v) {
  return ((OP == 3 ? v < s : v > s) || isnan(v)) ? v : s;
}
float pick_init() {
  const float inf = uintBitsToFloat(0x7f800000u);
  return OP == 3 ? inf : -inf;
}

// Reduced elements [r0, r1) of the output element at `base`: the value of
// OP's first step (sum, sum of squares, product, max or min); for OP 7 also
// the sum of exp(x - max) in `e` (0 when the max is infinite).
float walk(uint base, uint r0, uint r1, out float e) {
  float s;
  e = 0.0;
  if (OP == 2 || OP == 3 || OP == 7) {
    s = pick_init();
    for (uint r = r0; r < r1; ++r) s = pick(s, float(x[at(base, r)]));
    if (OP == 7 && !isinf(s))
      for (uint r = r0; r < r1; ++r) e += exp(float(x[at(base, r)]) - s);
  } else if (OP == 4) {
    s = 1.0;
    for (uint r = r0; r < r1; ++r) s *= float(x[at(base, r)]);
  } else {
    s = 0.0;
    for (uint r = r0; r < r1; ++r) {
      float v = float(x[at(base, r)]);
      s += OP >= 5 ? v * v : v;
    }
  }
  return s;
}

float finish(float s, float e, uint count) {
  if (OP == 7 && !isinf(s)) return s + log(e);
  if (OP == 1) return s / float(count);
  if (OP == 5) return sqrt(s);
  return s;
}

// Chunk partials of output o combined in chunk order.
float combine(uint o, uint chunks, out float e) {
  uint s0 = o * chunks;
  float s = OP == 4 ? 1.0 : 0.0;
  e = 0.0;
  if (OP == 2 || OP == 3 || OP == 7) {
    s = pick_init();
    for (uint c = 0u; c < chunks; ++c) s = pick(s, sp[pc.off[2] + 2u * (s0 + c)]);
    if (OP == 7 && !isinf(s))
      for (uint c = 0u; c < chunks; ++c) {
        float m = sp[pc.off[2] + 2u * (s0 + c)];
        if (!isinf(m)) e += sp[pc.off[2] + 2u * (s0 + c) + 1u] * exp(m - s);
      }
  } else {
    for (uint c = 0u; c < chunks; ++c) {
      float v = sp[pc.off[2] + 2u * (s0 + c)];
      s = OP == 4 ? s * v : s + v;
    }
  }
  return s;
}

// Input offset of output element o's first reduced element.
uint base_of(uint o) {
  int nk = p[2];
  uint rest = o, base = 0u;
  for (int d = nk - 1; d >= 0; --d) {
    uint dim = uint(p[4 + d]);
    base += (rest % dim) * uint(p[4 + nk + d]);
    rest /= dim;
  }
  return base;
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  uint outs = uint(p[0]), count = uint(p[1]);
  int tail = 4 + 2 * p[2] + 2 * p[3];
  uint ch = MODE == 0 ? count : uint(p[tail]), chunks = MODE == 0 ? 1u : uint(p[tail + 1]);
  float e;
  if (MODE == 1) {
    if (i >= outs * chunks) return;
    uint o = i / chunks, c = i % chunks;
    uint r0 = c * ch, r1 = min(count, r0 + ch);
    float s = walk(base_of(o), r0, r1, e);
    sp[pc.off[2] + 2u * i] = s;
    sp[pc.off[2] + 2u * i + 1u] = e;
    return;
  }
  if (i >= outs) return;
  float s = MODE == 2 ? combine(i, chunks, e) : walk(base_of(i), 0u, count, e);
  y[pc.off[1] + i] = ST(finish(s, e, count));
}
