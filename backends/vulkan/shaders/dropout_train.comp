#version 450
// DropoutTraining: the counter-based draw of docs/OPS.md, bit-identical to
// cpu_ref's: z = seed + (i + 1) * 0x9E3779B97F4A7C15 (mod 2^64), splitmix64's
// finaliser, u = (z >> 40) * 2^-24; mask = u >= ratio ? 1 / (1 - ratio) : 0
// (the keep scale computed on the host in f32, as cpu_ref does), Y = X * mask.
// 64-bit arithmetic on uvec2 (x low, y high word): shaderInt64 is not
// required. p: 0 n, 1 ratio bits, 2 keep scale bits.
// Bindings: 1 X, 2 seed (i64 as two words), 3 Y, 4 mask.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer Seed { uint seed[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };
layout(std430, binding = 4) writeonly buffer Mask { ST mask[]; };

uvec2 add64(uvec2 a, uvec2 b) {
  uint carry;
  uint lo = uaddCarry(a.x, b.x, carry);
  return uvec2(lo, a.y + b.y + carry);
}
uvec2 mul64(uvec2 a, uvec2 b) {
  uint hi, lo;
  umulExtended(a.x, b.x, hi, lo);
  return uvec2(lo, hi + a.x * b.y + a.y * b.x);
}
// z ^ (z >> s) for 0 < s < 32.
uvec2 xorshift(uvec2 z, uint s) {
  return z ^ uvec2((z.x >> s) | (z.y << (32u - s)), z.y >> s);
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uvec2 z = add64(uvec2(seed[pc.off[1]], seed[pc.off[1] + 1u]),
                  mul64(uvec2(i + 1u, 0u), uvec2(0x7F4A7C15u, 0x9E3779B9u)));
  z = mul64(xorshift(z, 30u), uvec2(0x1CE4E5B9u, 0xBF58476Du));
  z = mul64(xorshift(z, 27u), uvec2(0x133111EBu, 0x94D049BBu));
  z = xorshift(z, 31u);
  float u = float(z.y >> 8) * (1.0 / 16777216.0);
  float m = u >= pf(1) ? pf(2) : 0.0;
  mask[pc.off[3] + i] = ST(m);
  y[pc.off[2] + i] = ST(float(x[pc.off[0] + i]) * m);
}
