#version 450
// RotaryEmbedding (ONNX 23), one invocation per element of X: the first R
// features of each head vector rotate in pairs (halves: f and f + R/2;
// interleaved: 2f and 2f + 1) by the cache row's angle, the rest are
// copied. f32 arithmetic in every variant, as cpu_ref (16-bit widened, one
// rounding at the store). The cache row is b·S + t, or position_ids[b, t]
// (i32, or i64 as word pairs; negative counts from the end, as cpu_ref). A
// position outside the caches is an error at run time in cpu_ref; a shader
// cannot report one, so that token's head vectors are written as NaN: the
// error shows downstream instead of a plausible result.
// p: 0 n, 1 S, 2 H, 3 D, 4 R, 5 rank4, 6 interleaved, 7 pos (0 none, 1 i32,
//    2 i64), 8 positions (cache rows with position_ids).
// Bindings: 1 X, 2 cos, 3 sin, 4 position_ids (X when absent), 5 Y.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer C { ST cs[]; };
layout(std430, binding = 3) readonly buffer Sn { ST sn[]; };
layout(std430, binding = 4) readonly buffer P { int pos[]; };
layout(std430, binding = 5) writeonly buffer Y { ST y[]; };

// The cache row of token bt (b·S + t); -1 when out of range.
int cache_row(uint bt) {
  if (p[7] == 0) return int(bt);
  int len = p[8];
  int k;
  if (p[7] == 2) {
    int lo = pos[pc.off[3] + 2u * bt], hi = pos[pc.off[3] + 2u * bt + 1u];
    if (hi != (lo < 0 ? -1 : 0)) return -1;  // outside int32: outside the caches
    k = lo;
  } else {
    k = pos[pc.off[3] + bt];
  }
  if (k < -len || k >= len) return -1;
  return k < 0 ? k + len : k;
}

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint S = uint(p[1]), H = uint(p[2]), D = uint(p[3]), R = uint(p[4]);
  uint d = i % D, v = i / D;  // v: the head vector
  uint t, b;
  if (p[5] != 0) {  // [B, H, S, D]
    t = v % S;
    b = v / (S * H);
  } else {  // [B, S, H·D]
    t = (v / H) % S;
    b = v / (H * S);
  }
  int row = cache_row(b * S + t);
  uint o = pc.off[4] + i;
  if (row < 0) {
    y[o] = ST(uintBitsToFloat(0x7fc00000u));
    return;
  }
  if (d >= R) {
    y[o] = x[pc.off[0] + i];
    return;
  }
  uint half_r = R / 2u, f, d1, d2;
  if (p[6] != 0) {
    f = d / 2u;
    d1 = 2u * f;
    d2 = d1 + 1u;
  } else {
    f = d < half_r ? d : d - half_r;
    d1 = f;
    d2 = f + half_r;
  }
  uint base = pc.off[0] + i - d;
  uint at = uint(row) * half_r + f;
  float c = float(cs[pc.off[1] + at]), s = float(sn[pc.off[2] + at]);
  float x1 = float(x[base + d1]), x2 = float(x[base + d2]);
  y[o] = ST(d == d1 ? c * x1 - s * x2 : s * x1 + c * x2);
}
