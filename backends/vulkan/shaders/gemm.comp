#version 450
// Batched GEMM (MatMul with broadcast batch dims, Gemm with transposes,
// alpha, beta and a broadcast C): Y[z] = alpha * A[z] B[z] + beta * C.
// p: 0 M, 1 N, 2 K, 3 a_sm, 4 a_sk, 5 b_sk, 6 b_sn, 7 c_sm, 8 c_sn,
//    9 has_c, 10 alpha bits, 11 beta bits, 12 batches,
//    13.. a batch offsets[batches], then b batch offsets[batches].
// Batch z = gl_WorkGroupID.z. Bindings: 1 A, 2 B, 3 C (A when absent), 4 Y.
#include "common.glsl"
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) readonly buffer C { ST c[]; };
layout(std430, binding = 4) writeonly buffer Y { ST y[]; };

// Parameters read once per invocation: on CPU drivers (lavapipe) every
// buffer read is a gather, and the tile loads are the hot loop.
uint a_base, b_base, a_sm, a_sk, b_sk, b_sn;

float loadA(uint z, uint m, uint k) { return float(a[a_base + m * a_sm + k * a_sk]); }
float loadB(uint z, uint k, uint n) { return float(b[b_base + k * b_sk + n * b_sn]); }
void storeC(uint z, uint m, uint n, float acc) {
  float r = pf(10) * acc;
  if (p[9] != 0) r += pf(11) * float(c[pc.off[2] + m * uint(p[7]) + n * uint(p[8])]);
  y[pc.off[3] + (z * uint(p[0]) + m) * uint(p[1]) + n] = ST(r);
}
#include "gemm_tile.glsl"

void main() {
  uint z = gl_WorkGroupID.z;
  if (z >= uint(p[12])) return;
  a_base = pc.off[0] + uint(p[13 + z]);
  b_base = pc.off[1] + uint(p[13 + p[12] + z]);
  a_sm = uint(p[3]);
  a_sk = uint(p[4]);
  b_sk = uint(p[5]);
  b_sn = uint(p[6]);
  gemm_tile(gl_WorkGroupID.z, uint(p[0]), uint(p[1]), uint(p[2]));
}
