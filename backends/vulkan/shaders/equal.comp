#version 450
// The comparisons and logic ops with NumPy broadcasting; the result is a
// bool byte (0 or 1), stored through 8-bit storage. OP: 0 equal, 1 less,
// 2 greater, 3 less or equal, 4 greater or equal (float and integer
// variants); 5 and, 6 or, 7 not (V_U8 only: bool bytes, any non-zero byte is
// true; Not reads only A).
// Float variants compare values in f32 (NaN compares false, -0 == +0, as
// cpu_ref); V_U32 compares signed integers of WORDS raw 32-bit words each
// (an i64 is 2, low word first).
// p: broadcast.glsl's, two inputs (strides in elements, not words).
#extension GL_EXT_shader_8bit_storage : require
#include "common.glsl"
#include "broadcast.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(constant_id = 1) const int OP = 0;
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer Y { uint8_t y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint o[3] = broadcast_offsets(i, 2);
  bool r;
#if defined(V_U8)
  bool ta = uint(a[pc.off[0] + o[0]]) != 0u, tb = uint(b[pc.off[1] + o[1]]) != 0u;
  r = OP == 5 ? ta && tb : OP == 6 ? ta || tb : !ta;
#elif defined(V_U32)
  // -1, 0, 1 as a <, ==, > b: the high word signed, lower words unsigned.
  uint ia = pc.off[0] + o[0] * WORDS, ib = pc.off[1] + o[1] * WORDS;
  int ha = int(a[ia + WORDS - 1u]), hb = int(b[ib + WORDS - 1u]);
  int c = ha < hb ? -1 : ha > hb ? 1 : 0;
  for (uint w = WORDS - 1u; w-- > 0u && c == 0;) {
    uint la = a[ia + w], lb = b[ib + w];
    c = la < lb ? -1 : la > lb ? 1 : 0;
  }
  r = OP == 0 ? c == 0 : OP == 1 ? c < 0 : OP == 2 ? c > 0 : OP == 3 ? c <= 0 : c >= 0;
#else
  float va = float(a[pc.off[0] + o[0]]), vb = float(b[pc.off[1] + o[1]]);
  r = OP == 0 ? va == vb : OP == 1 ? va < vb : OP == 2 ? va > vb : OP == 3 ? va <= vb : va >= vb;
#endif
  y[pc.off[2] + i] = uint8_t(r ? 1u : 0u);
}
