#version 450
// CumSum and CumProd (PROD) along one axis: one thread per (outer, inner)
// row walks its L elements `inner` apart, forwards or in reverse, writing
// the running sum (product) before (exclusive) or after (inclusive) taking
// in each element; in f32 (cpu_ref in f64: within f32 tolerance for the rows
// models have; a product's relative error grows by about one f32 rounding
// per element, so ~L * 6e-8).
// p: 0 rows (outer * inner), 1 L, 2 inner, 3 exclusive, 4 reverse.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const bool PROD = false;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };

void main() {
  uint r = linear_group() * 256u + gl_LocalInvocationID.x;
  if (r >= uint(p[0])) return;
  uint L = uint(p[1]), inner = uint(p[2]);
  uint base = (r / inner) * L * inner + r % inner;
  bool exclusive = p[3] != 0, reverse = p[4] != 0;
  float acc = PROD ? 1.0 : 0.0;
  for (uint s = 0u; s < L; ++s) {
    uint at = base + (reverse ? L - 1u - s : s) * inner;
    float v = float(x[pc.off[0] + at]);
    if (exclusive) {
      y[pc.off[1] + at] = ST(acc);
      acc = PROD ? acc * v : acc + v;
    } else {
      acc = PROD ? acc * v : acc + v;
      y[pc.off[1] + at] = ST(acc);
    }
  }
}
