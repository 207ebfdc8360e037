// Backward kernels that scatter gradients back through an index map, in
// f32 (f64 in the float64 mode: every kernel is a template on its element
// type T): Conv2dGradWeight (im2col + GEMM), MaxPoolGrad, AveragePoolGrad,
// SliceGrad, GatherGrad. Overlapping windows and repeated indices
// accumulate in a fixed order, so results never depend on the thread count.
#include <cmath>
#include <cstring>
#include <limits>

#include "ampx/opset/shape_rules.hpp"
#include "common.hpp"
#include "gemm.hpp"
#include "parallel.hpp"
#include "window.hpp"

namespace ampx::reference::detail {
namespace {

// --------------------------------------------------------- Conv2d weight

// dW_g [Mg, Cg*kH*kW] += dY_g [Mg, OH*OW] * col(X_g)^T, image by image.
// With bias_gradient (a second output), dB[m] = the sum of dY[:, m, :, :],
// accumulated in double over images then pixels, a fixed order.
template <class T>
class Conv2dGradWeightKernel final : public CpuKernel {
 public:
  explicit Conv2dGradWeightKernel(ConvShape s) : s_(s) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const ConvShape& s = s_;
    const auto* dy = static_cast<const T*>(in[0]);
    const auto* x = static_cast<const T*>(in[1]);
    auto* dw = static_cast<T*>(out[0]);
    const int64_t ohw = s.OH * s.OW, kg = s.Cg * s.kH * s.kW;
    std::fill_n(dw, s.M * kg, T(0));
    col_.resize(static_cast<size_t>(kg * ohw));
    const int threads = threads_for(static_cast<double>(s.M) * kg * ohw);
    for (int64_t n = 0; n < s.N; ++n) {
      for (int64_t g = 0; g < s.group; ++g) {
        im2col(s, x + (n * s.C + g * s.Cg) * s.H * s.W, col_.data());
        GemmArgs<T> ga;
        ga.M = s.Mg;
        ga.N = kg;
        ga.K = ohw;
        ga.A = dy + (n * s.M + g * s.Mg) * ohw;
        ga.rsA = ohw;
        ga.csA = 1;
        ga.B = col_.data();  // B(k = output pixel, j = tap) = col[j * ohw + k]
        ga.rsB = 1;
        ga.csB = ohw;
        ga.C = dw + g * s.Mg * kg;
        ga.ldc = kg;
        gemm(ga, threads);
      }
    }
    if (out.size() > 1) bias_gradient(dy, static_cast<T*>(out[1]));
  }

 private:
  void bias_gradient(const T* dy, T* db) const {
    const ConvShape& s = s_;
    const int64_t ohw = s.OH * s.OW;
    parallel_for(s.M, threads_for(static_cast<double>(s.N) * s.M * ohw),
                 [&](int64_t m0, int64_t m1) {
                   for (int64_t m = m0; m < m1; ++m) {
                     double acc = 0.0;
                     for (int64_t n = 0; n < s.N; ++n) {
                       const T* p = dy + (n * s.M + m) * ohw;
                       for (int64_t i = 0; i < ohw; ++i) acc += static_cast<double>(p[i]);
                     }
                     db[m] = static_cast<T>(acc);
                   }
                 });
  }

  ConvShape s_;
  std::vector<T> col_;
};

// --------------------------------------------------------------- pooling

// Each output's gradient goes back over its window: to the window's first
// maximum (MaxPool; the first NaN when there is one, as the forward
// propagates it) or evenly to every counted cell (AveragePool).
template <class T, bool kMax>
class PoolGradKernel final : public CpuKernel {
 public:
  PoolGradKernel(PoolShape s, bool include_pad) : s_(s), include_pad_(include_pad) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const PoolShape& s = s_;
    const auto* dy = static_cast<const T*>(in[0]);
    const T* x = kMax ? static_cast<const T*>(in[1]) : nullptr;
    auto* dx = static_cast<T*>(out[0]);
    const double work = static_cast<double>(s.planes) * s.OH * s.OW * s.kH * s.kW;
    parallel_for(s.planes, threads_for(work), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        plane(dy + p * s.OH * s.OW, x ? x + p * s.H * s.W : nullptr, dx + p * s.H * s.W);
    });
  }

 private:
  void plane(const T* dy, const T* x, T* dx) const {
    const PoolShape& s = s_;
    std::fill_n(dx, s.H * s.W, T(0));
    for (int64_t oh = 0; oh < s.OH; ++oh) {
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        const auto [hs, he, ws, we, count] = pool_window(s, oh, ow, include_pad_);
        const T g = dy[oh * s.OW + ow];
        if constexpr (kMax) {
          int64_t best = -1;
          T m = -std::numeric_limits<T>::infinity();
          for (int64_t h = hs; h < he && !(best >= 0 && std::isnan(m)); ++h)
            for (int64_t w = ws; w < we; ++w) {
              const T v = x[h * s.W + w];
              if (best < 0 || v > m || (std::isnan(v) && !std::isnan(m))) {
                m = v;
                best = h * s.W + w;
                if (std::isnan(v)) break;
              }
            }
          if (best >= 0) dx[best] += g;
        } else {
          const T share = g / static_cast<T>(count);
          for (int64_t h = hs; h < he; ++h)
            for (int64_t w = ws; w < we; ++w) dx[h * s.W + w] += share;
        }
      }
    }
  }

  PoolShape s_;
  bool include_pad_;
};
template <class T>
using MaxPoolGradKernel = PoolGradKernel<T, true>;
template <class T>
using AvgPoolGradKernel = PoolGradKernel<T, false>;

// ------------------------------------------------------------- SliceGrad

// dX is zero except at the positions the Slice read, which receive dY.
template <class T>
class SliceGradKernel final : public CpuKernel {
 public:
  SliceGradKernel(std::vector<int64_t> dy_dims, std::vector<int64_t> x_dims,
                  std::vector<int64_t> start, std::vector<int64_t> step)
      : dy_dims_(std::move(dy_dims)),
        x_strides_(dense_strides(x_dims)),
        x_numel_(product(x_dims)),
        start_(std::move(start)),
        step_(std::move(step)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const T*>(in[0]);
    auto* dx = static_cast<T*>(out[0]);
    std::fill_n(dx, x_numel_, T(0));
    const int64_t n = product(dy_dims_);
    const size_t rank = dy_dims_.size();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) off += (start_[d] + idx[d] * step_[d]) * x_strides_[d];
      dx[off] = dy[i];
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < dy_dims_[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  std::vector<int64_t> dy_dims_, x_strides_;
  int64_t x_numel_;
  std::vector<int64_t> start_, step_;
};

// ------------------------------------------------------------ GatherGrad

// dData [outer, len, inner] zero, then dData[o, idx[k], i] += dY[o, k, i]
// for k in index order.
template <class T>
class GatherGradKernel final : public CpuKernel {
 public:
  GatherGradKernel(int64_t outer, int64_t len, int64_t inner, int64_t k, ampx_dtype index_dtype,
                   std::string where)
      : outer_(outer),
        len_(len),
        inner_(inner),
        k_(k),
        i64_(index_dtype == AMPX_DTYPE_I64),
        where_(std::move(where)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const T*>(in[0]);
    auto* dd = static_cast<T*>(out[0]);
    std::fill_n(dd, outer_ * len_ * inner_, T(0));
    for (int64_t j = 0; j < k_; ++j) {
      int64_t idx =
          i64_ ? static_cast<const int64_t*>(in[1])[j] : static_cast<const int32_t*>(in[1])[j];
      if (idx < -len_ || idx >= len_) {
        throw std::invalid_argument(where_ + ": index " + std::to_string(idx) +
                                    " is out of range for an axis of " + std::to_string(len_));
      }
      if (idx < 0) idx += len_;
      for (int64_t o = 0; o < outer_; ++o) {
        const T* src = dy + (o * k_ + j) * inner_;
        T* dst = dd + (o * len_ + idx) * inner_;
        for (int64_t i = 0; i < inner_; ++i) dst[i] += src[i];
      }
    }
  }

 private:
  int64_t outer_, len_, inner_, k_;
  bool i64_;
  std::string where_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_conv2d_grad_weight(Ctx& c) {
  // The convolution is X (input 1) with a weight of dW's dims (output 0).
  return typed<Conv2dGradWeightKernel>(c, conv_shape(c, c.in[1].dims, c.out[0].dims));
}

std::unique_ptr<CpuKernel> make_maxpool_grad(Ctx& c) {
  bool include_pad = false;
  return typed<MaxPoolGradKernel>(c, pool_shape(c, c.in[1].dims, true, include_pad), false);
}

std::unique_ptr<CpuKernel> make_avgpool_grad(Ctx& c) {
  bool include_pad = false;
  const PoolShape s = pool_shape(c, c.out[0].dims, false, include_pad);
  return typed<AvgPoolGradKernel>(c, s, include_pad);
}

std::unique_ptr<CpuKernel> make_slice_grad(Ctx& c) {
  const auto& x = c.out[0].dims;
  const auto rank = static_cast<int64_t>(x.size());
  const auto starts = c.v.get_ints("starts");
  const auto ends = c.v.get_ints("ends");
  std::vector<int64_t> def_axes(starts.size());
  for (size_t i = 0; i < def_axes.size(); ++i) def_axes[i] = static_cast<int64_t>(i);
  const auto axes = c.v.get_ints("axes", def_axes);
  const auto steps = c.v.get_ints("steps", std::vector<int64_t>(starts.size(), 1));
  std::vector<int64_t> start(x.size(), 0), step(x.size(), 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto a = static_cast<size_t>(c.axis(axes[i], rank, "axes"));
    start[a] = opset::slice_axis(starts[i], ends[i], steps[i], x[a]).start;
    step[a] = steps[i];
  }
  return typed<SliceGradKernel>(c, c.in[0].dims, x, std::move(start), std::move(step));
}

std::unique_ptr<CpuKernel> make_gather_grad(Ctx& c) {
  const auto& d = c.out[0].dims;
  const auto axis =
      static_cast<size_t>(c.axis(c.v.get_int("axis", 0), static_cast<int64_t>(d.size()), "axis"));
  return typed<GatherGradKernel>(c, product(d, 0, axis), d[axis], product(d, axis + 1),
                                 c.in[1].numel, c.in[1].dtype, c.v.where());
}

}  // namespace ampx::reference::detail
