#version 450
// Softmax, or LogSoftmax with LOG = 1, over one axis: a workgroup per row
// (rows = outer * inner, the row has L elements `inner` apart); max and sum
// reduced in shared memory, f32. LogSoftmax is x - (max + log(sum)), the
// same expression as cpu_ref, so it never takes the log of a rounded ratio.
// p: 0 rows, 1 L, 2 inner.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) writeonly buffer Y { ST y[]; };
layout(constant_id = 0) const int LOG = 0;
shared float red[64];

float reduce_max(float v) {
  uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] = max(red[t], red[t + s]);
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}
float reduce_sum(float v) {
  uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}

void main() {
  uint row = linear_group();
  if (row >= uint(p[0])) return;  // uniform per workgroup: barriers stay legal
  uint L = uint(p[1]), inner = uint(p[2]);
  uint base = (row / inner) * L * inner + row % inner;
  uint t = gl_LocalInvocationID.x;
  float m = -3.402823466e38;
  for (uint j = t; j < L; j += 64u) m = max(m, float(x[pc.off[0] + base + j * inner]));
  m = reduce_max(m);
  float s = 0.0;
  for (uint j = t; j < L; j += 64u) s += exp(float(x[pc.off[0] + base + j * inner]) - m);
  s = reduce_sum(s);
  float lse = m + log(s);
  for (uint j = t; j < L; j += 64u) {
    float v = float(x[pc.off[0] + base + j * inner]);
    y[pc.off[1] + base + j * inner] = ST(LOG != 0 ? v - lse : exp(v - m) / s);
  }
}
