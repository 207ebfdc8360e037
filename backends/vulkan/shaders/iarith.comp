#version 450
// Integer arithmetic on raw words (V_U32 only), as cpu_ref's i64/i32
// kernels: two's complement, wrapping. WORDS 1: i32; 2: i64 as (low, high)
// word pairs, emulated without shaderInt64 (carries by uaddCarry and
// usubBorrow, products by umulExtended). NumPy broadcasting of two inputs
// (the unary ops read A only; the host binds it as B too).
// OP: 0 add, 1 sub, 2 mul, 3 div (truncates toward zero; x / 0 = 0 and
// x / -1 = -x, wrapping, as cpu_ref), 4 min, 5 max, 6 neg, 7 abs
// (|MIN| = MIN), 8 fmod (C's remainder, the dividend's sign), 9 mod
// (Python's, the divisor's sign); a remainder by 0 or -1 is 0. i64
// division is shift-and-subtract on the magnitudes (int64.glsl).
// p: broadcast.glsl's, two inputs (strides in elements, not words).
#include "common.glsl"
#include "broadcast.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(constant_id = 1) const int OP = 0;
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

#include "int64.glsl"

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint o[3] = broadcast_offsets(i, 2);
  uint ia = pc.off[0] + o[0] * WORDS, ib = pc.off[1] + o[1] * WORDS;
  if (WORDS == 1u) {
    int x = int(a[ia]), z = int(b[ib]), r;
    if (OP == 0) r = x + z;
    else if (OP == 1) r = x - z;
    else if (OP == 2) r = x * z;
    else if (OP == 3) r = z == 0 ? 0 : z == -1 ? int(0u - uint(x)) : x / z;
    else if (OP == 8 || OP == 9) {
      r = z == 0 || z == -1 ? 0 : x - (x / z) * z;  // OpSDiv truncates
      if (OP == 9 && r != 0 && ((r < 0) != (z < 0))) r += z;
    }
    else if (OP == 4) r = z < x ? z : x;
    else if (OP == 5) r = z > x ? z : x;
    else if (OP == 6) r = int(0u - uint(x));
    else r = x < 0 ? int(0u - uint(x)) : x;
    y[pc.off[2] + i] = uint(r);
  } else {
    uvec2 x = uvec2(a[ia], a[ia + 1u]), z = uvec2(b[ib], b[ib + 1u]), r;
    if (OP == 0) r = add64(x, z);
    else if (OP == 1) r = sub64(x, z);
    else if (OP == 2) r = mul64(x, z);
    else if (OP == 4) r = less64(z, x) ? z : x;
    else if (OP == 5) r = less64(x, z) ? z : x;
    else if (OP == 6) r = sub64(uvec2(0u), x);
    else if (OP == 7) r = int(x.y) < 0 ? sub64(uvec2(0u), x) : x;
    else {
      // 3 div, 8 fmod, 9 mod: on the magnitudes, then the signs.
      bool z0 = z == uvec2(0u), zm1 = z == uvec2(0xffffffffu);
      bool xn = int(x.y) < 0, zn = int(z.y) < 0;
      uvec2 q, m;
      udivmod64(xn ? neg64(x) : x, zn ? neg64(z) : z, q, m);
      if (OP == 3) {
        r = z0 ? uvec2(0u) : zm1 ? neg64(x) : (xn != zn ? neg64(q) : q);
      } else {
        r = z0 || zm1 ? uvec2(0u) : xn ? neg64(m) : m;
        if (OP == 9 && r != uvec2(0u) && (int(r.y) < 0) != zn) r = add64(r, z);
      }
    }
    y[pc.off[2] + 2u * i] = r.x;
    y[pc.off[2] + 2u * i + 1u] = r.y;
  }
}
