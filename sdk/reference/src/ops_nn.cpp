// Contractions and pooling in f32 (f64 in the float64 mode: every kernel
// is a template on its element type T): Conv2d (im2col + GEMM, direct for
// depthwise), MatMul and Gemm (the blocked GEMM), MaxPool, AveragePool,
// GlobalAveragePool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common.hpp"
#include "gemm.hpp"
#include "parallel.hpp"
#include "window.hpp"

namespace ampx::reference::detail {
namespace {

// --------------------------------------------------------------- Conv2d

template <class T>
class Conv2dKernel final : public CpuKernel {
 public:
  Conv2dKernel(ConvShape s, bool has_bias) : s_(s), bias_(has_bias) {
    pointwise_ = s.kH == 1 && s.kW == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 && s.pl == 0 &&
                 s.OH == s.H && s.OW == s.W;
    direct_ = s.Cg == 1 && s.group > 1;  // depthwise (any channel multiplier)
  }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* w = static_cast<const T*>(in[1]);
    const T* b = bias_ ? static_cast<const T*>(in[2]) : nullptr;
    auto* y = static_cast<T*>(out[0]);
    const double work = static_cast<double>(s_.N) * s_.M * s_.OH * s_.OW * s_.Cg * s_.kH * s_.kW;
    const int threads = threads_for(work);
    if (s_.N >= 2 && threads > 1) {
      // Whole images per thread; the GEMMs inside stay single-threaded.
      parallel_for(s_.N, threads, [&](int64_t n0, int64_t n1) {
        std::vector<T> col;
        for (int64_t n = n0; n < n1; ++n) image(x, w, b, y, n, col, 1);
      });
    } else {
      std::vector<T> col;
      for (int64_t n = 0; n < s_.N; ++n) image(x, w, b, y, n, col, threads);
    }
  }

 private:
  void image(const T* x, const T* w, const T* b, T* y, int64_t n, std::vector<T>& col,
             int threads) const {
    const ConvShape& s = s_;
    const int64_t ohw = s.OH * s.OW, kg = s.Cg * s.kH * s.kW;
    const T* xn = x + n * s.C * s.H * s.W;
    T* yn = y + n * s.M * ohw;
    for (int64_t m = 0; m < s.M; ++m) std::fill_n(yn + m * ohw, ohw, b ? b[m] : T(0));
    if (direct_) {
      for (int64_t m = 0; m < s.M; ++m)
        depthwise(xn + (m / s.Mg) * s.H * s.W, w + m * kg, yn + m * ohw);
      return;
    }
    for (int64_t g = 0; g < s.group; ++g) {
      const T* xg = xn + g * s.Cg * s.H * s.W;
      const T* bmat = xg;
      if (!pointwise_) {
        col.resize(static_cast<size_t>(kg * ohw));
        im2col(s, xg, col.data());
        bmat = col.data();
      }
      GemmArgs<T> ga;
      ga.M = s.Mg;
      ga.N = ohw;
      ga.K = kg;
      ga.A = w + g * s.Mg * kg;
      ga.rsA = kg;
      ga.csA = 1;
      ga.B = bmat;
      ga.rsB = ohw;
      ga.csB = 1;
      ga.C = yn + g * s.Mg * ohw;
      ga.ldc = ohw;
      gemm(ga, threads);
    }
  }

  // One output channel from one input channel (Cg == 1): y += w (*) x.
  void depthwise(const T* xc, const T* wm, T* ym) const {
    const ConvShape& s = s_;
    for (int64_t ki = 0; ki < s.kH; ++ki) {
      for (int64_t kj = 0; kj < s.kW; ++kj) {
        const T wv = wm[ki * s.kW + kj];
        int64_t lo, hi;
        valid_range(s.W, s.OW, s.sw, s.pl, kj * s.dw, lo, hi);
        for (int64_t oh = 0; oh < s.OH; ++oh) {
          const int64_t ih = oh * s.sh - s.pt + ki * s.dh;
          if (ih < 0 || ih >= s.H) continue;
          const int64_t base = ih * s.W - s.pl + kj * s.dw;
          T* dst = ym + oh * s.OW;
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * xc[base + ow * s.sw];
        }
      }
    }
  }

  ConvShape s_;
  bool bias_, pointwise_ = false, direct_ = false;
};

// --------------------------------------------------------------- MatMul

template <class T>
class MatMulKernel final : public CpuKernel {
 public:
  MatMulKernel(int64_t M, int64_t N, int64_t K, std::vector<int64_t> batch,
               std::vector<int64_t> a_strides, std::vector<int64_t> b_strides, bool has_bias)
      : has_bias_(has_bias),
        M_(M),
        N_(N),
        K_(K),
        batch_(std::move(batch)),
        sa_(std::move(a_strides)),
        sb_(std::move(b_strides)) {
    nbatch_ = product(batch_);
    // B shared by every batch and A dense: one GEMM with M * batch rows.
    fold_ = nbatch_ > 1 && std::all_of(sb_.begin(), sb_.end(), [](int64_t v) { return v == 0; });
    for (size_t i = 0; fold_ && i < batch_.size(); ++i) fold_ = batch_[i] == 1 || sa_[i] != 0;
  }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* a = static_cast<const T*>(in[0]);
    const auto* b = static_cast<const T*>(in[1]);
    auto* y = static_cast<T*>(out[0]);
    // The GEMM accumulates into y: start from the bias row (fused MatMul+Add)
    // or from zero.
    if (has_bias_) {
      const auto* bias = static_cast<const T*>(in[2]);
      for (int64_t r = 0; r < nbatch_ * M_; ++r) std::copy_n(bias, N_, y + r * N_);
    } else {
      std::fill_n(y, nbatch_ * M_ * N_, T(0));
    }
    if (fold_) {
      gemm(args(a, b, y, M_ * nbatch_), max_threads());
      return;
    }
    const double per = static_cast<double>(M_) * N_ * K_;
    const int threads = threads_for(per * nbatch_);
    if (nbatch_ >= 2 && threads > 1 && threads_for(per) < threads) {
      parallel_for(nbatch_, threads, [&](int64_t b0, int64_t b1) {
        for (int64_t i = b0; i < b1; ++i) one(a, b, y, i, 1);
      });
    } else {
      for (int64_t i = 0; i < nbatch_; ++i) one(a, b, y, i, threads);
    }
  }

 private:
  GemmArgs<T> args(const T* a, const T* b, T* y, int64_t rows) const {
    GemmArgs<T> g;
    g.M = rows;
    g.N = N_;
    g.K = K_;
    g.A = a;
    g.rsA = K_;
    g.csA = 1;
    g.B = b;
    g.rsB = N_;
    g.csB = 1;
    g.C = y;
    g.ldc = N_;
    return g;
  }
  void one(const T* a, const T* b, T* y, int64_t i, int threads) const {
    int64_t oa = 0, ob = 0, rem = i;
    for (size_t d = batch_.size(); d-- > 0;) {
      const int64_t k = rem % batch_[d];
      rem /= batch_[d];
      oa += k * sa_[d];
      ob += k * sb_[d];
    }
    gemm(args(a + oa, b + ob, y + i * M_ * N_, M_), threads);
  }

  bool has_bias_;
  int64_t M_, N_, K_, nbatch_ = 1;
  std::vector<int64_t> batch_, sa_, sb_;  // element strides per output batch dim (0: broadcast)
  bool fold_ = false;
};

// ----------------------------------------------------------------- Gemm

// The shape of a Gemm node: GemmArgs without the element type.
struct GemmShape {
  int64_t M, N, K, rsA, csA, rsB, csB;
  double alpha, beta;
};

template <class T>
class GemmKernel final : public CpuKernel {
 public:
  GemmKernel(const GemmShape& s, bool has_c, int64_t c_rs, int64_t c_cs)
      : beta_(static_cast<T>(s.beta)), has_c_(has_c), c_rs_(c_rs), c_cs_(c_cs) {
    g_.M = s.M;
    g_.N = s.N;
    g_.K = s.K;
    g_.rsA = s.rsA;
    g_.csA = s.csA;
    g_.rsB = s.rsB;
    g_.csB = s.csB;
    g_.ldc = s.N;
    g_.alpha = static_cast<T>(s.alpha);
  }
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    GemmArgs<T> g = g_;
    g.A = static_cast<const T*>(in[0]);
    g.B = static_cast<const T*>(in[1]);
    g.C = static_cast<T*>(out[0]);
    if (has_c_) {
      const auto* c = static_cast<const T*>(in[2]);
      for (int64_t i = 0; i < g.M; ++i)
        for (int64_t j = 0; j < g.N; ++j) g.C[i * g.N + j] = beta_ * c[i * c_rs_ + j * c_cs_];
    } else {
      std::fill_n(g.C, g.M * g.N, T(0));
    }
    gemm(g, max_threads());
  }

 private:
  GemmArgs<T> g_;
  T beta_;
  bool has_c_;
  int64_t c_rs_, c_cs_;
};

// -------------------------------------------------------------- pooling

template <class T, bool kMax>
class PoolKernel final : public CpuKernel {
 public:
  PoolKernel(PoolShape s, bool include_pad) : s_(s), include_pad_(include_pad) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const PoolShape& s = s_;
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const double work = static_cast<double>(s.planes) * s.OH * s.OW * s.kH * s.kW;
    parallel_for(s.planes, threads_for(work), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) plane(x + p * s.H * s.W, y + p * s.OH * s.OW);
    });
  }

 private:
  void plane(const T* x, T* y) const {
    const PoolShape& s = s_;
    for (int64_t oh = 0; oh < s.OH; ++oh) {
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        const auto [hs, he, ws, we, count] = pool_window(s, oh, ow, include_pad_);
        if constexpr (kMax) {
          T m = -std::numeric_limits<T>::infinity();  // padding never wins
          for (int64_t h = hs; h < he; h += s.dh)
            for (int64_t w = ws; w < we; w += s.dw) {
              const T v = x[h * s.W + w];
              if (v > m || std::isnan(v)) m = v;  // NaN propagates
            }
          y[oh * s.OW + ow] = m;
        } else {
          T sum = T(0);
          for (int64_t h = hs; h < he; h += s.dh)
            for (int64_t w = ws; w < we; w += s.dw) sum += x[h * s.W + w];
          y[oh * s.OW + ow] = sum / static_cast<T>(count);
        }
      }
    }
  }

  PoolShape s_;
  bool include_pad_;
};

template <class T>
class GlobalAvgPoolKernel final : public CpuKernel {
 public:
  GlobalAvgPoolKernel(int64_t planes, int64_t size) : planes_(planes), size_(size) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    for (int64_t p = 0; p < planes_; ++p)
      y[p] = sum_n(x + p * size_, size_) / static_cast<T>(size_);
  }

 private:
  int64_t planes_, size_;
};

template <bool kMax>
std::unique_ptr<CpuKernel> make_pool(Ctx& c) {
  c.arity(1, 1, 1);
  c.rank(c.in[0], "input X", 4);
  bool include_pad = false;
  const PoolShape s = pool_shape(c, c.in[0].dims, kMax, include_pad, true);
  const auto& d = c.in[0].dims;
  c.dims(c.out[0], "output", {d[0], d[1], s.OH, s.OW});
  if (c.dtype == AMPX_DTYPE_F64) return std::make_unique<PoolKernel<double, kMax>>(s, include_pad);
  return std::make_unique<PoolKernel<float, kMax>>(s, include_pad);
}

}  // namespace

std::unique_ptr<CpuKernel> make_conv2d(Ctx& c) {
  c.arity(2, 4, 1);
  c.rank(c.in[0], "input X", 4);
  c.rank(c.in[1], "weight", 4);
  const ConvShape s = conv_shape(c, c.in[0].dims, c.in[1].dims);
  if (c.in.size() >= 3) {
    c.rank(c.in[2], "bias", 1);
    c.dims(c.in[2], "bias", {s.M});
  }
  c.dims(c.out[0], "output", {s.N, s.M, s.OH, s.OW});
  if (c.in.size() == 4) c.dims(c.in[3], "residual", {s.N, s.M, s.OH, s.OW});
  return with_activation(with_residual(typed<Conv2dKernel>(c, s, c.in.size() >= 3), c), c);
}

std::unique_ptr<CpuKernel> make_matmul(Ctx& c) {
  c.arity(2, 3, 1);
  c.min_rank(c.in[0], "input A", 2);
  c.min_rank(c.in[1], "input B", 2);
  const auto& a = c.in[0].dims;
  const auto& b = c.in[1].dims;
  const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
  if (b[b.size() - 2] != K) {
    c.fail("inner dims do not match: A " + dims_str(a) + ", B " + dims_str(b));
  }
  const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  std::vector<int64_t> batch(r), sa(r, 0), sb(r, 0);
  const std::vector<int64_t> da = dense_strides(a), db = dense_strides(b);
  for (size_t i = 0; i < r; ++i) {
    const bool ha = i >= r - ra, hb = i >= r - rb;
    const int64_t xa = ha ? a[i - (r - ra)] : 1, xb = hb ? b[i - (r - rb)] : 1;
    if (xa != xb && xa != 1 && xb != 1) {
      c.fail("batch dims do not broadcast: A " + dims_str(a) + ", B " + dims_str(b));
    }
    batch[i] = std::max(xa, xb);
    if (xa == 0 || xb == 0) batch[i] = 0;
    if (ha && xa != 1) sa[i] = da[i - (r - ra)];
    if (hb && xb != 1) sb[i] = db[i - (r - rb)];
  }
  std::vector<int64_t> want = batch;
  want.push_back(M);
  want.push_back(N);
  c.dims(c.out[0], "output", want);
  const bool has_bias = c.in.size() == 3;
  if (has_bias) c.dims(c.in[2], "bias", {N});
  return with_activation(
      typed<MatMulKernel>(c, M, N, K, std::move(batch), std::move(sa), std::move(sb), has_bias), c);
}

std::unique_ptr<CpuKernel> make_gemm(Ctx& c) {
  c.arity(2, 3, 1);
  c.rank(c.in[0], "input A", 2);
  c.rank(c.in[1], "input B", 2);
  const int64_t ta = c.v.get_int("transA", 0), tb = c.v.get_int("transB", 0);
  if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1)) {
    c.fail("attributes 'transA' and 'transB' must be 0 or 1");
  }
  const double alpha = c.v.get_float("alpha", 1.0), beta = c.v.get_float("beta", 1.0);
  const auto& a = c.in[0].dims;
  const auto& b = c.in[1].dims;
  GemmShape g{};
  g.M = ta ? a[1] : a[0];
  g.K = ta ? a[0] : a[1];
  g.N = tb ? b[0] : b[1];
  const int64_t kb = tb ? b[1] : b[0];
  if (kb != g.K) {
    c.fail("inner dims do not match: A " + dims_str(a) + (ta ? " (transposed)" : "") + ", B " +
           dims_str(b) + (tb ? " (transposed)" : ""));
  }
  g.rsA = ta ? 1 : g.K;
  g.csA = ta ? g.M : 1;
  g.rsB = tb ? 1 : g.N;
  g.csB = tb ? g.K : 1;
  g.alpha = alpha;
  g.beta = beta;
  int64_t crs = 0, ccs = 0;
  if (c.in.size() == 3) {
    const auto& cd = c.in[2].dims;
    if (cd.size() > 2) c.fail("input C has " + std::to_string(cd.size()) + " dims, expected <= 2");
    std::vector<int64_t> full(2, 1);
    std::copy(cd.begin(), cd.end(), full.begin() + static_cast<ptrdiff_t>(2 - cd.size()));
    if ((full[0] != 1 && full[0] != g.M) || (full[1] != 1 && full[1] != g.N)) {
      c.fail("input C " + dims_str(cd) + " does not broadcast to [" + std::to_string(g.M) + ", " +
             std::to_string(g.N) + "]");
    }
    crs = full[0] == 1 ? 0 : full[1];
    ccs = full[1] == 1 ? 0 : 1;
  }
  c.dims(c.out[0], "output", {g.M, g.N});
  return with_activation(typed<GemmKernel>(c, g, c.in.size() == 3, crs, ccs), c);
}

std::unique_ptr<CpuKernel> make_maxpool(Ctx& c) {
  return make_pool<true>(c);
}
std::unique_ptr<CpuKernel> make_avgpool(Ctx& c) {
  return make_pool<false>(c);
}

std::unique_ptr<CpuKernel> make_global_avgpool(Ctx& c) {
  c.arity(1, 1, 1);
  c.min_rank(c.in[0], "input X", 3);
  const auto& d = c.in[0].dims;
  std::vector<int64_t> want(d.size(), 1);
  want[0] = d[0];
  want[1] = d[1];
  c.dims(c.out[0], "output", want);
  const int64_t size = product(d, 2);
  if (size == 0 && d[0] * d[1] > 0) c.fail("spatial dims are empty");
  return typed<GlobalAvgPoolKernel>(c, d[0] * d[1], size);
}

}  // namespace ampx::reference::detail
