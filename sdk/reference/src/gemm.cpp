#include "gemm.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

// Register tile MR x NR: MR*NR/4 SSE accumulators (8 of the 16 xmm
// registers on baseline x86-64), written as plain loops over fixed-size
// arrays that g++ -O2/-O3 unrolls and vectorises; no intrinsics.
#ifndef AMPX_GEMM_MR
#define AMPX_GEMM_MR 4
#endif
#ifndef AMPX_GEMM_NR
#define AMPX_GEMM_NR 8
#endif
constexpr int64_t MR = AMPX_GEMM_MR;
constexpr int64_t NR = AMPX_GEMM_NR;
// Cache blocks: a KC x NR sliver of B stays in L1, an MC x KC block of A in L2.
constexpr int64_t KC = 256;
constexpr int64_t MC = 96;    // multiple of MR
constexpr int64_t NC = 2048;  // multiple of NR

// Packs A(i0.., k0..) (mc x kc) into MR-row panels, k-major, zero-padded.
template <class T>
void pack_a(const GemmArgs<T>& g, int64_t i0, int64_t mc, int64_t k0, int64_t kc, T* dst) {
  for (int64_t p = 0; p < mc; p += MR) {
    const int64_t rows = std::min(MR, mc - p);
    for (int64_t k = 0; k < kc; ++k) {
      const T* src = g.A + (i0 + p) * g.rsA + (k0 + k) * g.csA;
      int64_t r = 0;
      for (; r < rows; ++r) dst[r] = src[r * g.rsA];
      for (; r < MR; ++r) dst[r] = T(0);
      dst += MR;
    }
  }
}

// Packs B(k0.., j0..) (kc x nc) into NR-column panels, k-major, zero-padded.
template <class T>
void pack_b(const GemmArgs<T>& g, int64_t k0, int64_t kc, int64_t j0, int64_t nc, T* dst) {
  for (int64_t q = 0; q < nc; q += NR) {
    const int64_t cols = std::min(NR, nc - q);
    for (int64_t k = 0; k < kc; ++k) {
      const T* src = g.B + (k0 + k) * g.rsB + (j0 + q) * g.csB;
      if (cols == NR && g.csB == 1) {
        std::memcpy(dst, src, NR * sizeof(T));
      } else {
        int64_t c = 0;
        for (; c < cols; ++c) dst[c] = src[c * g.csB];
        for (; c < NR; ++c) dst[c] = T(0);
      }
      dst += NR;
    }
  }
}

// acc = sum_k a[k] (x) b[k] over kc, then C(rows x cols) += alpha * acc.
template <class T>
inline void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, T* __restrict c,
                         int64_t ldc, int64_t rows, int64_t cols, T alpha) {
  T acc[MR][NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int64_t r = 0; r < MR; ++r) {
      const T av = a[r];
      for (int64_t j = 0; j < NR; ++j) acc[r][j] += av * b[j];
    }
    a += MR;
    b += NR;
  }
  if (rows == MR && cols == NR) {
    for (int64_t r = 0; r < MR; ++r)
      for (int64_t j = 0; j < NR; ++j) c[r * ldc + j] += alpha * acc[r][j];
  } else {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] += alpha * acc[r][j];
  }
}

// Single-threaded blocked GEMM on rows [m0, m1) and columns [n0, n1).
template <class T>
void gemm_block(const GemmArgs<T>& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int64_t ncap = std::min(NC, ((n1 - n0 + NR - 1) / NR) * NR);
  const int64_t kcap = std::min(KC, g.K);
  const int64_t mcap = std::min(MC, ((m1 - m0 + MR - 1) / MR) * MR);
  std::vector<T> bp(static_cast<size_t>(kcap * ncap));
  std::vector<T> ap(static_cast<size_t>(kcap * mcap));
  for (int64_t j0 = n0; j0 < n1; j0 += NC) {
    const int64_t nc = std::min(NC, n1 - j0);
    for (int64_t k0 = 0; k0 < g.K; k0 += KC) {
      const int64_t kc = std::min(KC, g.K - k0);
      pack_b(g, k0, kc, j0, nc, bp.data());
      for (int64_t i0 = m0; i0 < m1; i0 += MC) {
        const int64_t mc = std::min(MC, m1 - i0);
        pack_a(g, i0, mc, k0, kc, ap.data());
        for (int64_t q = 0; q < nc; q += NR) {
          const T* bq = bp.data() + q * kc;
          for (int64_t p = 0; p < mc; p += MR) {
            micro_kernel(kc, ap.data() + p * kc, bq, g.C + (i0 + p) * g.ldc + j0 + q, g.ldc,
                         std::min(MR, mc - p), std::min(NR, nc - q), g.alpha);
          }
        }
      }
    }
  }
}

}  // namespace

template <class T>
void gemm(const GemmArgs<T>& g, int threads) {
  if (g.M <= 0 || g.N <= 0) return;
  if (g.K <= 0) return;  // C += 0
  const double work = static_cast<double>(g.M) * g.N * g.K;
  threads = std::min(threads, threads_for(work));
  // Split the dimension with more register tiles; chunks are whole tiles so
  // every thread runs full micro-kernels where a single thread would.
  const int64_t mt = (g.M + MR - 1) / MR, nt = (g.N + NR - 1) / NR;
  if (threads <= 1) {
    gemm_block(g, 0, g.M, 0, g.N);
  } else if (mt >= nt) {
    parallel_for(mt, threads, [&](int64_t b, int64_t e) {
      gemm_block(g, b * MR, std::min(g.M, e * MR), 0, g.N);
    });
  } else {
    parallel_for(nt, threads, [&](int64_t b, int64_t e) {
      gemm_block(g, 0, g.M, b * NR, std::min(g.N, e * NR));
    });
  }
}

template void gemm<float>(const GemmArgs<float>& g, int threads);
template void gemm<double>(const GemmArgs<double>& g, int threads);

}  // namespace ampx::reference::detail
