#version 450
// Batched GEMM for CPU Vulkan drivers (lavapipe/llvmpipe: VkPhysicalDeviceType
// CPU), same parameters and bindings as gemm.comp. There every invocation is
// one SIMD lane of an 8-wide loop, every buffer (and shared-memory) load is
// a per-lane scalar loop, and a barrier is a coroutine switch, so the tiled
// shared-memory kernel is slow: here each invocation computes an RM x RN
// block of C straight from A and B, with no shared memory and no barriers,
// loading 4 elements per load where the layout allows (MODE), so each load
// feeds several FMAs. Accumulation is f32 in every variant.
// p: as gemm.comp (0 M, 1 N, 2 K, 3 a_sm, 4 a_sk, 5 b_sk, 6 b_sn, 7 c_sm,
//    8 c_sn, 9 has_c, 10 alpha, 11 beta, 12 batches, 13.. batch offsets).
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 8, local_size_y = 8) in;
const uint RM = 8u;  // rows of C per invocation
const uint RN = 8u;  // columns of C per invocation (multiple of 4)
// 0: any strides, scalar loads; 1: A rows and B rows contiguous (a_sk = 1,
// b_sn = 1: MatMul); 2: A rows and B columns contiguous (a_sk = 1, b_sk = 1:
// Gemm transB, a dense layer); 3: A columns and B rows contiguous (a_sm = 1,
// b_sn = 1: Gemm transA, a dense layer's weight gradient X^T dY). Modes 1 to
// 3 take 4-wide loads when the offsets and row lengths are multiples of 4,
// else the scalar loop.
layout(constant_id = 2) const uint MODE = 0;

layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 1) readonly buffer A4 { ST4 a4[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 2) readonly buffer B4 { ST4 b4[]; };
layout(std430, binding = 3) readonly buffer C { ST c[]; };
layout(std430, binding = 4) writeonly buffer Y { ST y[]; };

void main() {
  uint z = gl_WorkGroupID.z;
  if (z >= uint(p[12])) return;
  uint M = uint(p[0]), N = uint(p[1]), K = uint(p[2]);
  uint m0 = gl_GlobalInvocationID.y * RM, n0 = gl_GlobalInvocationID.x * RN;
  if (m0 >= M || n0 >= N) return;
  uint a_base = pc.off[0] + uint(p[13 + z]);
  uint b_base = pc.off[1] + uint(p[13 + p[12] + z]);
  uint a_sm = uint(p[3]), a_sk = uint(p[4]), b_sk = uint(p[5]), b_sn = uint(p[6]);
  // Rows/columns past the edge read the last valid one (discarded at the store).
  uint ar[RM], bc[RN];
  [[unroll]] for (uint i = 0u; i < RM; ++i) ar[i] = a_base + min(m0 + i, M - 1u) * a_sm;
  [[unroll]] for (uint j = 0u; j < RN; ++j) bc[j] = b_base + min(n0 + j, N - 1u) * b_sn;
  float acc[RM * RN];
  [[unroll]] for (uint i = 0u; i < RM * RN; ++i) acc[i] = 0.0;

  bool a_vec = MODE != 0u && ((a_base | a_sm) & 3u) == 0u;
  uint k = 0u;
  if (MODE == 2u && a_vec && ((b_base | b_sn) & 3u) == 0u) {
    // A[m, k..k+3] and B[k..k+3, n] are both 4-wide loads: dot products.
    [[unroll]] for (uint i = 0u; i < RM; ++i) ar[i] >>= 2u;
    [[unroll]] for (uint j = 0u; j < RN; ++j) bc[j] >>= 2u;
    for (uint k4 = 0u; k4 < K / 4u; ++k4) {
      vec4 av[RM], bv[RN];
      [[unroll]] for (uint i = 0u; i < RM; ++i) av[i] = vec4(a4[ar[i] + k4]);
      [[unroll]] for (uint j = 0u; j < RN; ++j) bv[j] = vec4(b4[bc[j] + k4]);
      [[unroll]] for (uint i = 0u; i < RM; ++i)
        [[unroll]] for (uint j = 0u; j < RN; ++j) {
          float s = acc[i * RN + j];
          s = fma(av[i].x, bv[j].x, s);
          s = fma(av[i].y, bv[j].y, s);
          s = fma(av[i].z, bv[j].z, s);
          s = fma(av[i].w, bv[j].w, s);
          acc[i * RN + j] = s;
        }
    }
    k = K & ~3u;
    [[unroll]] for (uint i = 0u; i < RM; ++i) ar[i] <<= 2u;
    [[unroll]] for (uint j = 0u; j < RN; ++j) bc[j] <<= 2u;
  } else if (MODE == 1u && a_vec && ((b_base | b_sk | N) & 3u) == 0u) {
    // A[m, k..k+3] one 4-wide load; B[k, n..n+3] one 4-wide load per row of
    // the 4 k's. Column quads past N read the row's last quad.
    uint nq = N / 4u;
    [[unroll]] for (uint i = 0u; i < RM; ++i) ar[i] >>= 2u;
    uint bq[RN / 4u];
    [[unroll]] for (uint j = 0u; j < RN / 4u; ++j) bq[j] = (b_base >> 2u) + min(n0 / 4u + j, nq - 1u);
    uint bk = b_sk >> 2u;
    for (uint k4 = 0u; k4 < K / 4u; ++k4) {
      vec4 av[RM];
      [[unroll]] for (uint i = 0u; i < RM; ++i) av[i] = vec4(a4[ar[i] + k4]);
      [[unroll]] for (uint kk = 0u; kk < 4u; ++kk) {
        uint row = (k4 * 4u + kk) * bk;
        [[unroll]] for (uint j = 0u; j < RN / 4u; ++j) {
          vec4 bv = vec4(b4[bq[j] + row]);
          [[unroll]] for (uint i = 0u; i < RM; ++i) {
            float s = av[i][kk];
            acc[i * RN + j * 4u + 0u] = fma(s, bv.x, acc[i * RN + j * 4u + 0u]);
            acc[i * RN + j * 4u + 1u] = fma(s, bv.y, acc[i * RN + j * 4u + 1u]);
            acc[i * RN + j * 4u + 2u] = fma(s, bv.z, acc[i * RN + j * 4u + 2u]);
            acc[i * RN + j * 4u + 3u] = fma(s, bv.w, acc[i * RN + j * 4u + 3u]);
          }
        }
      }
    }
    k = K & ~3u;
    [[unroll]] for (uint i = 0u; i < RM; ++i) ar[i] <<= 2u;
  } else if (MODE == 3u && ((a_base | a_sk | M) & 3u) == 0u && ((b_base | b_sk | N) & 3u) == 0u) {
    // A[m..m+3, k] and B[k, n..n+3] are both 4-wide loads: an outer product
    // per k. Quads past M or N read the last quad (discarded at the store).
    uint mq = M / 4u, nq = N / 4u;
    uint aq[RM / 4u], bq[RN / 4u];
    [[unroll]] for (uint i = 0u; i < RM / 4u; ++i) aq[i] = (a_base >> 2u) + min(m0 / 4u + i, mq - 1u);
    [[unroll]] for (uint j = 0u; j < RN / 4u; ++j) bq[j] = (b_base >> 2u) + min(n0 / 4u + j, nq - 1u);
    uint ak = a_sk >> 2u, bk = b_sk >> 2u;
    for (; k < K; ++k) {
      vec4 av[RM / 4u], bv[RN / 4u];
      [[unroll]] for (uint i = 0u; i < RM / 4u; ++i) av[i] = vec4(a4[aq[i] + k * ak]);
      [[unroll]] for (uint j = 0u; j < RN / 4u; ++j) bv[j] = vec4(b4[bq[j] + k * bk]);
      [[unroll]] for (uint i = 0u; i < RM; ++i) {
        float s = av[i / 4u][i % 4u];
        [[unroll]] for (uint j = 0u; j < RN / 4u; ++j) {
          acc[i * RN + j * 4u + 0u] = fma(s, bv[j].x, acc[i * RN + j * 4u + 0u]);
          acc[i * RN + j * 4u + 1u] = fma(s, bv[j].y, acc[i * RN + j * 4u + 1u]);
          acc[i * RN + j * 4u + 2u] = fma(s, bv[j].z, acc[i * RN + j * 4u + 2u]);
          acc[i * RN + j * 4u + 3u] = fma(s, bv[j].w, acc[i * RN + j * 4u + 3u]);
        }
      }
    }
  }
  // Scalar loads: any layout, and the K % 4 tail of the 4-wide paths.
  for (; k < K; ++k) {
    float av[RM], bv[RN];
    [[unroll]] for (uint i = 0u; i < RM; ++i) av[i] = float(a[ar[i] + k * a_sk]);
    [[unroll]] for (uint j = 0u; j < RN; ++j) bv[j] = float(b[bc[j] + k * b_sk]);
    [[unroll]] for (uint i = 0u; i < RM; ++i)
      [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i * RN + j] = fma(av[i], bv[j], acc[i * RN + j]);
  }

  float alpha = pf(10), beta = pf(11);
  bool has_c = p[9] != 0;
  uint c_sm = uint(p[7]), c_sn = uint(p[8]);
  [[unroll]] for (uint i = 0u; i < RM; ++i) {
    uint m = m0 + i;
    if (m >= M) break;
    [[unroll]] for (uint j = 0u; j < RN; ++j) {
      uint n = n0 + j;
      if (n >= N) break;
      float r = alpha * acc[i * RN + j];
      if (has_c) r += beta * float(c[pc.off[2] + m * c_sm + n * c_sn]);
      y[pc.off[3] + (z * M + m) * N + n] = ST(r);
    }
  }
}
