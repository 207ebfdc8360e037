#version 450
// The bit ops on raw integer storage, bit for bit as cpu_ref, with NumPy
// broadcasting of two inputs (BitwiseNot reads A only; the host binds it as
// B too). V_U32: WORDS 1 (i32) or 2 (i64 as (low, high) word pairs, no
// shaderInt64); V_U8: one byte (i8, u8) through 8-bit storage, widened to
// uint on load.
// OP: 0 and, 1 or, 2 xor, 3 not, 4 shift left, 5 shift right. SIGNED: the
// dtype is signed: a right shift is arithmetic, a negative amount is out of
// range. An amount < 0 or >= the width gives what the sign extension alone
// gives (-1 for a right shift of a negative x, else 0), as ONNX opset 28 and
// docs/OPS.md; GLSL leaves such shifts undefined, hence the test first.
// p: broadcast.glsl's, two inputs (strides in elements, not words).
#include "common.glsl"
#include "broadcast.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(constant_id = 1) const int OP = 0;
layout(constant_id = 2) const bool SIGNED = true;
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };

// One 32-bit lane (i32; a byte sign- or zero-extended to 32 bits, `bits` 8).
uint op32(uint x, uint z, uint bits) {
  if (OP == 0) return x & z;
  if (OP == 1) return x | z;
  if (OP == 2) return x ^ z;
  if (OP == 3) return ~x;
  bool negative = SIGNED && int(x) < 0;
  if ((SIGNED && int(z) < 0) || z >= bits) return OP == 5 && negative ? 0xffffffffu : 0u;
  if (OP == 4) return x << z;
  return SIGNED ? uint(int(x) >> int(z)) : x >> z;
}

// i64 as (low, high) words.
uvec2 op64(uvec2 x, uvec2 z) {
  if (OP == 0) return x & z;
  if (OP == 1) return x | z;
  if (OP == 2) return x ^ z;
  if (OP == 3) return ~x;
  bool negative = SIGNED && int(x.y) < 0;
  // The amount is in range only if its high word is 0 (not negative, < 2^32).
  if (z.y != 0u || z.x >= 64u) return OP == 5 && negative ? uvec2(0xffffffffu) : uvec2(0u);
  uint s = z.x;
  if (s == 0u) return x;
  if (OP == 4)
    return s < 32u ? uvec2(x.x << s, (x.y << s) | (x.x >> (32u - s)))
                   : uvec2(0u, x.x << (s - 32u));
  // The high word shifted as the dtype's sign says, then the bits it drops.
  uint fill = SIGNED ? uint(int(x.y) >> 31) : 0u;
  if (s < 32u)
    return uvec2((x.x >> s) | (x.y << (32u - s)),
                 SIGNED ? uint(int(x.y) >> int(s)) : x.y >> s);
  return uvec2(SIGNED ? uint(int(x.y) >> int(s - 32u)) : x.y >> (s - 32u), fill);
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint o[3] = broadcast_offsets(i, 2);
#if defined(V_U8)
  uint x = uint(a[pc.off[0] + o[0]]), z = uint(b[pc.off[1] + o[1]]);
  if (SIGNED) {  // sign-extend the bytes
    x = uint(int(x << 24) >> 24);
    z = uint(int(z << 24) >> 24);
  }
  y[pc.off[2] + i] = uint8_t(op32(x, z, 8u) & 0xffu);
#else
  uint ia = pc.off[0] + o[0] * WORDS, ib = pc.off[1] + o[1] * WORDS;
  if (WORDS == 1u) {
    y[pc.off[2] + i] = op32(a[ia], b[ib], 32u);
  } else {
    uvec2 r = op64(uvec2(a[ia], a[ia + 1u]), uvec2(b[ib], b[ib + 1u]));
    y[pc.off[2] + 2u * i] = r.x;
    y[pc.off[2] + 2u * i + 1u] = r.y;
  }
#endif
}
