#version 450
// Equal with NumPy broadcasting; the result is a bool byte (0 or 1), stored
// through 8-bit storage. Float variants compare values (NaN != NaN,
// -0 == +0, as cpu_ref); V_U32 compares integers as WORDS raw 32-bit words
// each (an i64 is 2: equal when both words are).
// p: broadcast.glsl's, two inputs (strides in elements, not words).
#extension GL_EXT_shader_8bit_storage : require
#include "common.glsl"
#include "broadcast.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer Y { uint8_t y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint o[3] = broadcast_offsets(i, 2);
  bool eq = true;
  for (uint w = 0u; w < WORDS; ++w)
    eq = eq && CT(a[pc.off[0] + o[0] * WORDS + w]) == CT(b[pc.off[1] + o[1] * WORDS + w]);
  y[pc.off[2] + i] = uint8_t(eq ? 1u : 0u);
}
