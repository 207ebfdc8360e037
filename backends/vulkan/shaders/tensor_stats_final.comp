#version 450
// TensorStats, pass 2 of 2: one workgroup per input combines that input's
// slots of tensor_stats_partial (max and integer sums, order-free) into its
// row of the f32 stats [n, 3]: the largest finite |x|, the non-finite share
// of all elements, and the share of nonzero finite elements below `tiny`.
// p: 0 rows n, then per row r: p[1 + 3r] its first slot, p[2 + 3r] its
// slot count, p[3 + 3r] its element count.
// Bindings: 1 stats, 2 scratch.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) writeonly buffer S { float s[]; };
layout(std430, binding = 2) readonly buffer W { uint w[]; };

shared uint red_max[256];
shared uint red_bad[256];
shared uint red_nz[256];
shared uint red_small[256];

void main() {
  uint r = linear_group();
  if (r >= uint(p[0])) return;
  uint t = gl_LocalInvocationID.x;
  uint first = uint(p[1 + 3 * r]), count = uint(p[2 + 3 * r]), n = uint(p[3 + 3 * r]);
  uint amax = 0u, bad = 0u, nz = 0u, small = 0u;
  for (uint i = t; i < count; i += 256u) {
    uint slot = pc.off[1] + (first + i) * 4u;
    amax = max(amax, w[slot]);
    bad += w[slot + 1u];
    nz += w[slot + 2u];
    small += w[slot + 3u];
  }
  red_max[t] = amax;
  red_bad[t] = bad;
  red_nz[t] = nz;
  red_small[t] = small;
  barrier();
  for (uint h = 128u; h > 0u; h >>= 1) {
    if (t < h) {
      red_max[t] = max(red_max[t], red_max[t + h]);
      red_bad[t] += red_bad[t + h];
      red_nz[t] += red_nz[t + h];
      red_small[t] += red_small[t + h];
    }
    barrier();
  }
  if (t != 0u) return;
  uint row = pc.off[0] + r * 3u;
  s[row] = uintBitsToFloat(red_max[0]);
  s[row + 1u] = n > 0u ? float(red_bad[0]) / float(n) : 0.0;
  s[row + 2u] = red_nz[0] > 0u ? float(red_small[0]) / float(red_nz[0]) : 0.0;
}
