#version 450
// TensorStats (docs/OPS.md, "Training ops"), one input per dispatch: a
// single workgroup strides over the tensor in the dtype it has (V_F32, or
// V_F16S: f16 storage, widened exactly) and writes its row of the f32
// stats [n, 3]: the largest finite |x|, the non-finite share, and the share
// of nonzero finite elements below `tiny`. Non-finite values are found from
// their exponent bits (no isnan/isinf a fast-math compiler may drop); the
// counts are integers and max is order-free, so the row never depends on
// timing. p: 0 n, 1 row, 2 tiny (float bits).
// Bindings: 1 stats, 2 the tensor.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) buffer S { float s[]; };
layout(std430, binding = 2) readonly buffer X { ST x[]; };

shared float red_max[256];
shared uint red_bad[256];
shared uint red_nz[256];
shared uint red_small[256];

void main() {
  uint t = gl_LocalInvocationID.x;
  uint n = uint(p[0]);
  float tiny = pf(2);
  float amax = 0.0;
  uint bad = 0u, nz = 0u, small = 0u;
  for (uint i = t; i < n; i += 256u) {
    float v = float(x[pc.off[1] + i]);
    uint bits = floatBitsToUint(v) & 0x7fffffffu;
    float a = uintBitsToFloat(bits);
    bool finite = (bits & 0x7f800000u) != 0x7f800000u;
    bad += finite ? 0u : 1u;
    if (finite) amax = max(amax, a);
    nz += finite && bits != 0u ? 1u : 0u;
    small += bits != 0u && a < tiny ? 1u : 0u;
  }
  red_max[t] = amax;
  red_bad[t] = bad;
  red_nz[t] = nz;
  red_small[t] = small;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (t < w) {
      red_max[t] = max(red_max[t], red_max[t + w]);
      red_bad[t] += red_bad[t + w];
      red_nz[t] += red_nz[t + w];
      red_small[t] += red_small[t + w];
    }
    barrier();
  }
  if (t != 0u) return;
  uint row = pc.off[0] + uint(p[1]) * 3u;
  s[row] = red_max[0];
  s[row + 1u] = n > 0u ? float(red_bad[0]) / float(n) : 0.0;
  s[row + 2u] = red_nz[0] > 0u ? float(red_small[0]) / float(red_nz[0]) : 0.0;
}
