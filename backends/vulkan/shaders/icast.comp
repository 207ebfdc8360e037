#version 450
// Casts between integer/bool and float tensors, bit for bit as cpu_ref's
// Cast: one variant per (SRC_x, DST_x) pair, x one of F32, F16, I32, I64,
// BOOL. Conversions need only 16-/8-bit storage (no shaderInt64, no f16
// arithmetic): an i64 is a (low, high) word pair.
// - integer -> float: rounded once. The magnitude's top 32 significant bits,
//   the bits below OR-ed into bit 0 (sticky), convert to f32 with the same
//   rounding as the exact value (8 guard bits); for f16 the top 24 bits with
//   a sticky bit give cpu_ref's round-to-odd f32, which the store rounds to
//   nearest even.
// - float -> integer: truncated toward zero, NaN -> 0, saturating.
// - anything -> bool: v != 0 (a NaN is true); bool -> anything: 0 or 1.
// - i64 -> i32 wraps (the low word), i32 -> i64 sign-extends.
// p: 0 n.
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_shader_8bit_storage : enable
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Params { int p[]; };
layout(push_constant) uniform PC {
  uint off[8];
  uint gx;
} pc;
#if defined(SRC_F32)
layout(std430, binding = 1) readonly buffer X { float x[]; };
#elif defined(SRC_F16)
layout(std430, binding = 1) readonly buffer X { float16_t x[]; };
#elif defined(SRC_BOOL)
layout(std430, binding = 1) readonly buffer X { uint8_t x[]; };
#else
layout(std430, binding = 1) readonly buffer X { uint x[]; };
#endif
#if defined(DST_F32)
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#elif defined(DST_F16)
layout(std430, binding = 2) writeonly buffer Y { float16_t y[]; };
#elif defined(DST_BOOL)
layout(std430, binding = 2) writeonly buffer Y { uint8_t y[]; };
#else
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
#endif

// The integer value of a (low, high) pair as float, rounded as cpu_ref.
float int_to_float(uvec2 v) {
  bool neg = int(v.y) < 0;
  if (neg) {  // magnitude (|MIN| = 2^63 fits the unsigned pair)
    uint br;
    uint lo = usubBorrow(0u, v.x, br);
    v = uvec2(lo, 0u - v.y - br);
  }
  // m: the top 32 significant bits with a sticky bit, scaled by 2^s.
  uint m;
  int s;
  if (v.y == 0u) {
    m = v.x;
    s = 0;
  } else {
    int k = findMSB(v.y) + 1;  // bits of the high word in use, 1..32
    m = k == 32 ? v.y : (v.y << (32 - k)) | (v.x >> k);
    uint lost = k == 32 ? v.x : v.x << (32 - k);
    if (lost != 0u) m |= 1u;
    s = k;
  }
#if defined(DST_F16)
  // Round to odd at 24 bits: exact in f32, rounded once by the f16 store.
  if (m >= (1u << 24)) {
    uint low = m & 0xffu;
    m = (m >> 8) | (low != 0u ? 1u : 0u);
    s += 8;
  }
#endif
  float f = ldexp(float(m), s);  // uint -> float rounds to nearest even
  return neg ? -f : f;
}

// Truncated toward zero, NaN -> 0, saturating; as a (low, high) pair.
uvec2 float_to_int(float f) {
#if defined(DST_I32)
  int r = isnan(f) ? 0 : f <= -2147483648.0 ? int(0x80000000u)
        : f >= 2147483648.0 ? 0x7fffffff : int(f);
  return uvec2(uint(r), r < 0 ? 0xffffffffu : 0u);
#else
  if (isnan(f)) return uvec2(0u);
  if (f <= -9223372036854775808.0) return uvec2(0u, 0x80000000u);
  if (f >= 9223372036854775808.0) return uvec2(0xffffffffu, 0x7fffffffu);
  float t = trunc(abs(f));  // < 2^63, at most 24 significant bits: exact
  float hi = floor(t * (1.0 / 4294967296.0));
  uvec2 v = uvec2(uint(t - hi * 4294967296.0), uint(hi));
  if (f < 0.0) {
    uint br;
    uint lo = usubBorrow(0u, v.x, br);
    v = uvec2(lo, 0u - v.y - br);
  }
  return v;
#endif
}

void main() {
  uint i = (gl_WorkGroupID.y * pc.gx + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint at = pc.off[0] + i;
#if defined(SRC_F32) || defined(SRC_F16)
  float f = float(x[at]);
#if defined(DST_BOOL)
  y[pc.off[1] + i] = uint8_t(f != 0.0 || isnan(f) ? 1u : 0u);
#else
  uvec2 v = float_to_int(f);
#endif
#else
  // Integer or bool source, as a (low, high) pair.
#if defined(SRC_BOOL)
  uvec2 v = uvec2(uint(x[at]) != 0u ? 1u : 0u, 0u);
#elif defined(SRC_I32)
  uvec2 v = uvec2(x[at], int(x[at]) < 0 ? 0xffffffffu : 0u);
#else
  uvec2 v = uvec2(x[pc.off[0] + 2u * i], x[pc.off[0] + 2u * i + 1u]);
#endif
#if defined(DST_F32)
  y[pc.off[1] + i] = int_to_float(v);
#elif defined(DST_F16)
  y[pc.off[1] + i] = float16_t(int_to_float(v));
#elif defined(DST_BOOL)
  y[pc.off[1] + i] = uint8_t(v.x != 0u || v.y != 0u ? 1u : 0u);
#endif
#endif
#if defined(DST_I32)
  y[pc.off[1] + i] = v.x;
#elif defined(DST_I64)
  y[pc.off[1] + 2u * i] = v.x;
  y[pc.off[1] + 2u * i + 1u] = v.y;
#endif
}
