#version 450
// Cast between f32 and f16 (CAST_F32_F16 or CAST_F16_F32). Conversions on
// load/store need only 16-bit storage; f32 -> f16 rounds to nearest even
// (OpFConvert's default). p: 0 n.
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Params { int p[]; };
layout(push_constant) uniform PC {
  uint off[8];
  uint gx;
} pc;
#if defined(CAST_F32_F16)
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float16_t y[]; };
#else
layout(std430, binding = 1) readonly buffer X { float16_t x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#endif

void main() {
  uint i = (gl_WorkGroupID.y * pc.gx + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
#if defined(CAST_F32_F16)
  y[pc.off[1] + i] = float16_t(x[pc.off[0] + i]);
#else
  y[pc.off[1] + i] = float(x[pc.off[0] + i]);
#endif
}
