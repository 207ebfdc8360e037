// Shared by every ampx compute shader. Variant macros (set by the build):
//   V_F32   tensors float,     simple arithmetic float
//   V_F16   tensors float16_t, simple arithmetic float16_t (needs shaderFloat16
//           and storageBuffer16BitAccess): the `native` 16-bit kernels
//   V_F16S  tensors float16_t, all arithmetic float (needs 16-bit storage
//           only): the `emulated` 16-bit kernels
//   V_U32   tensors as raw 32-bit words: integer dtypes (an i64 is two words)
//           in kernels that only move, select or compare elements
//   V_U8    tensors as raw bytes (bool, i8, u8): needs storageBuffer8BitAccess;
//           loads and stores convert to and from uint, which 8-bit storage
//           alone allows (no shaderInt8)
// ST is the storage type (ST4 four of them), CT the type of cheap elementwise
// arithmetic (uint for the raw variants: no float arithmetic on them).
// Accumulations (GEMM, reductions, norms) and transcendentals are always f32,
// as tensor-core GEMMs accumulate in f32: that keeps every kernel within
// tests/support/tolerances.hpp of cpu_ref.
#extension GL_GOOGLE_include_directive : require
#if defined(V_F32)
#define ST float
#define ST4 vec4
#define CT float
#elif defined(V_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ST float16_t
#define ST4 f16vec4
#define CT float16_t
#elif defined(V_F16S)
#extension GL_EXT_shader_16bit_storage : require
#define ST float16_t
#define ST4 f16vec4
#define CT float
#elif defined(V_U32)
#define ST uint
#define CT uint
#elif defined(V_U8)
#extension GL_EXT_shader_8bit_storage : require
#define ST uint8_t
#define CT uint
#else
#error "no variant"
#endif

// Binding 0: the kernel's int32 parameters, written once at prepare.
layout(std430, set = 0, binding = 0) readonly buffer Params { int p[]; };
// Per launch: element offsets of the bound tensors (binding b uses off[b-1])
// and, for 1-D kernels, the width of the workgroup grid in x (the host lays
// a long 1-D grid out as x*y and splits dispatches beyond
// maxComputeWorkGroupCount with vkCmdDispatchBase).
layout(push_constant) uniform PC {
  uint off[8];
  uint gx;
} pc;

float pf(int i) { return intBitsToFloat(p[i]); }

// Linear workgroup index of a 1-D kernel.
uint linear_group() { return gl_WorkGroupID.y * pc.gx + gl_WorkGroupID.x; }
