// The tiled GEMM core shared by gemm.comp and conv2d.comp. The including
// shader defines loadA(z, m, k), loadB(z, k, n) (returning float, 0 outside
// the matrix) and storeC(z, m, n, acc), and the sizes M, N, K as uints.
// Each 16x16 workgroup computes a TM x TN tile of C; each thread a
// (TM/16) x (TN/16) register block, strided by 16 so neighbouring threads
// read neighbouring shared-memory words. Tiles of A and B pass through
// shared memory TK deep. Tile sizes are specialisation constants.
layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint TM = 64;
layout(constant_id = 1) const uint TN = 64;
layout(constant_id = 2) const uint TK = 16;
const uint RM = TM / 16;
const uint RN = TN / 16;
#if defined(V_F16)
#define SH float16_t  // half the shared memory: the native variant's tiles
#else
#define SH float
#endif
shared SH As[TK * TM];
shared SH Bs[TK * TN];

void gemm_tile(uint z, uint M, uint N, uint K) {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  uint m0 = gl_WorkGroupID.y * TM, n0 = gl_WorkGroupID.x * TN;
  float acc[RM * RN];
  for (uint i = 0u; i < RM * RN; ++i) acc[i] = 0.0;
  for (uint k0 = 0u; k0 < K; k0 += TK) {
    for (uint e = tid; e < TK * TM; e += 256u) {
      uint kk = e / TM, mm = e - kk * TM;
      uint m = m0 + mm, k = k0 + kk;
      As[e] = SH((m < M && k < K) ? loadA(z, m, k) : 0.0);
    }
    for (uint e = tid; e < TK * TN; e += 256u) {
      uint kk = e / TN, nn = e - kk * TN;
      uint n = n0 + nn, k = k0 + kk;
      Bs[e] = SH((n < N && k < K) ? loadB(z, k, n) : 0.0);
    }
    barrier();
    for (uint kk = 0u; kk < TK; ++kk) {
      float av[RM], bv[RN];
      for (uint i = 0u; i < RM; ++i) av[i] = float(As[kk * TM + ty + i * 16u]);
      for (uint j = 0u; j < RN; ++j) bv[j] = float(Bs[kk * TN + tx + j * 16u]);
      for (uint i = 0u; i < RM; ++i)
        for (uint j = 0u; j < RN; ++j) acc[i * RN + j] = fma(av[i], bv[j], acc[i * RN + j]);
    }
    barrier();
  }
  for (uint i = 0u; i < RM; ++i) {
    uint m = m0 + ty + i * 16u;
    if (m >= M) continue;
    for (uint j = 0u; j < RN; ++j) {
      uint n = n0 + tx + j * 16u;
      if (n < N) storeC(z, m, n, acc[i * RN + j]);
    }
  }
}
