#version 450
// SoftmaxGrad along one axis: dX = Y (dY - sum_axis dY Y), a workgroup per
// row (rows = outer * inner, the row has L elements `inner` apart), the dot
// product reduced in shared memory, f32. p: 0 rows, 1 L, 2 inner.
// Bindings: 1 dY, 2 Y, 3 dX.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 1) readonly buffer DY { ST dy[]; };
layout(std430, binding = 2) readonly buffer Y { ST y[]; };
layout(std430, binding = 3) writeonly buffer DX { ST dx[]; };
#include "reduce64.glsl"

void main() {
  uint row = linear_group();
  if (row >= uint(p[0])) return;  // uniform per workgroup: barriers stay legal
  uint L = uint(p[1]), inner = uint(p[2]);
  uint base = (row / inner) * L * inner + row % inner;
  uint t = gl_LocalInvocationID.x;
  float s = 0.0;
  for (uint j = t; j < L; j += 64u) {
    uint k = base + j * inner;
    s += float(dy[pc.off[0] + k]) * float(y[pc.off[1] + k]);
  }
  float dot = reduce_sum64(s);
  for (uint j = t; j < L; j += 64u) {
    uint k = base + j * inner;
    dx[pc.off[2] + k] = ST(float(y[pc.off[1] + k]) * (float(dy[pc.off[0] + k]) - dot));
  }
}
