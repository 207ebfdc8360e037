#version 450
// ScatterND after the host's copy of data into the output: one thread per
// update element (tuple t, element s of its slice). Deterministic without
// atomics, as cpu_ref's in-order loop: with reduction none only the last
// tuple naming a slice writes it (a repeated tuple's last update wins);
// with add/mul/max/min the first tuple naming a slice owns it and folds
// every tuple naming it into the output in tuple order (f32; V_U32 in
// wrapping i32, or i64 word pairs; the host allows no 16-bit reduction,
// as cpu_ref). Indices are
// int32 words (i64: the low word), negative ones from the end; a tuple out
// of range writes nothing (cpu_ref reports it; a shader cannot). WORDS
// shader elements per tensor element (V_U32: 2 for an i64).
// p: 0 n (update elements), 1 slice (elements), 2 tuples, 3 depth, 4 idx64,
//    5 reduction (0 none, 1 add, 2 mul, 3 max, 4 min), then per coordinate
//    its dim[depth] and its stride[depth] (elements).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WORDS = 1;
layout(std430, binding = 1) readonly buffer I { int ind[]; };
layout(std430, binding = 2) readonly buffer U { ST upd[]; };
layout(std430, binding = 3) buffer Y { ST y[]; };
#if defined(V_U32)
#include "int64.glsl"
#endif

// Element offset of tuple t's slice; ok false when a coordinate is out of range.
uint offset_of(uint t, out bool ok) {
  int depth = p[3];
  uint off = 0u;
  ok = true;
  for (int k = 0; k < depth; ++k) {
    uint at = t * uint(depth) + uint(k);
    int idx = ind[pc.off[0] + (p[4] != 0 ? 2u * at : at)];
    int len = p[6 + k];
    if (idx < 0) idx += len;
    ok = ok && idx >= 0 && idx < len;
    off += uint(idx) * uint(p[6 + depth + k]);
  }
  return off;
}

void main() {
  uint e = linear_group() * 256u + gl_LocalInvocationID.x;
  if (e >= uint(p[0])) return;
  uint slice = uint(p[1]), tuples = uint(p[2]);
  uint t = e / slice, s = e % slice;
  int red = p[5];
  bool ok, ok2;
  uint off = offset_of(t, ok);
  if (!ok) return;
  uint dst = pc.off[2] + (off + s) * WORDS;
  if (red == 0) {
    for (uint t2 = t + 1u; t2 < tuples; ++t2)
      if (offset_of(t2, ok2) == off && ok2) return;  // a later update wins
    for (uint w = 0u; w < WORDS; ++w) y[dst + w] = upd[pc.off[1] + e * WORDS + w];
    return;
  }
#if !defined(V_U8)
  for (uint t2 = 0u; t2 < t; ++t2)
    if (offset_of(t2, ok2) == off && ok2) return;  // an earlier tuple owns it
#if defined(V_U32)
  uvec2 acc = uvec2(y[dst], WORDS == 2u ? y[dst + 1u] : 0u);
#else
  float acc = float(y[dst]);
#endif
  for (uint t2 = t; t2 < tuples; ++t2) {
    if (t2 != t && (offset_of(t2, ok2) != off || !ok2)) continue;
    uint src = pc.off[1] + (t2 * slice + s) * WORDS;
#if defined(V_U32)
    if (WORDS == 1u) {
      uint a = acc.x, b = upd[src];
      acc.x = red == 1 ? a + b : red == 2 ? a * b
            : red == 3 ? (int(a) < int(b) ? b : a) : (int(b) < int(a) ? b : a);
    } else {
      uvec2 b = uvec2(upd[src], upd[src + 1u]);
      acc = red == 1 ? add64(acc, b) : red == 2 ? mul64(acc, b)
          : red == 3 ? (less64(acc, b) ? b : acc) : (less64(b, acc) ? b : acc);
    }
#else
    float b = float(upd[src]);
    acc = red == 1 ? acc + b : red == 2 ? acc * b
        : red == 3 ? (acc < b ? b : acc) : (b < acc ? b : acc);
#endif
  }
#if defined(V_U32)
  y[dst] = acc.x;
  if (WORDS == 2u) y[dst + 1u] = acc.y;
#else
  y[dst] = ST(acc);
#endif
#endif
}
