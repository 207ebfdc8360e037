#version 450
// Where: z = cond ? x : y with NumPy broadcasting over all three. The
// condition is a bool byte (8-bit storage; any non-zero byte is true, as
// cpu_ref). x, y, z are moved, never computed on: V_U32 moves integers as
// WORDS raw words per element (an i64 is 2). The pick goes through CT because
// a select on float16_t values needs shaderFloat16: in the f16s variant
// that is a widening to f32 and back, exact for every f16 (a NaN stays NaN).
// p: broadcast.glsl's, three inputs (strides in elements, not words).
#extension GL_EXT_shader_8bit_storage : require
#include "common.glsl"
#include "broadcast.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(std430, binding = 1) readonly buffer C { uint8_t c[]; };
layout(std430, binding = 2) readonly buffer X { ST x[]; };
layout(std430, binding = 3) readonly buffer Y { ST y[]; };
layout(std430, binding = 4) writeonly buffer Z { ST z[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint o[3] = broadcast_offsets(i, 3);
  bool pick = uint(c[pc.off[0] + o[0]]) != 0u;
  for (uint w = 0u; w < WORDS; ++w) {
    CT r = pick ? CT(x[pc.off[1] + o[1] * WORDS + w]) : CT(y[pc.off[2] + o[2] * WORDS + w]);
    z[pc.off[3] + i * WORDS + w] = ST(r);
  }
}
