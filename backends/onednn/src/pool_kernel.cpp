#include "pool_kernel.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

#include "layout_store.hpp"

#ifdef AMPX_ONEDNN_HAVE_OPENMP
#include <omp.h>
#endif

namespace ampx::onednn {

namespace ps = plugin_support;

namespace {

// GCC's vector extensions: 8 floats, one AVX register (two SSE ones in the
// baseline build). Deterministic code, where auto-vectorising the scalar loop
// depended on the optimisation level (and missed at -O3).
typedef float Vec8 __attribute__((vector_size(32)));
typedef int Mask8 __attribute__((vector_size(32)));

// The row loop for a block of B = 8 * V floats, inlined into each ISA's
// clone below.
template <int V, bool kMax>
[[gnu::always_inline]] inline void rows(const PoolGeometry& g, const float* src, float* dst,
                                        int64_t r0, int64_t r1) {
  constexpr int64_t B = 8 * V;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t plane = r / g.oh, oh = r % g.oh;  // plane: image * blocks + block
    const float* in = src + plane * g.h * g.w * B;
    float* out = dst + (plane * g.oh + oh) * g.ow * B;
    const int64_t h0 = oh * g.sh - g.pt;
    const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h0 + g.kh, g.h);
    const int64_t count_h = g.include_pad ? std::min(h0 + g.kh, g.h + g.pb) - h0 : he - hs;
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t w0 = ow * g.sw - g.pl;
      const int64_t ws = std::max<int64_t>(w0, 0), we = std::min(w0 + g.kw, g.w);
      Vec8 acc[V];
      Mask8 nan[V];
      for (int v = 0; v < V; ++v) {
        acc[v] = Vec8{} + (kMax ? -kInf : 0.0f);  // padding never wins the max
        nan[v] = Mask8{};
      }
      for (int64_t h = hs; h < he; ++h) {
        const float* p = in + (h * g.w + ws) * B;
        for (int64_t w = ws; w < we; ++w, p += B) {
          for (int v = 0; v < V; ++v) {
            Vec8 x;
            std::memcpy(&x, p + 8 * v, sizeof x);
            if constexpr (kMax) {
              acc[v] = acc[v] < x ? x : acc[v];
              nan[v] |= x != x;  // NaN propagates
            } else {
              acc[v] += x;
            }
          }
        }
      }
      float* o = out + ow * B;
      if constexpr (kMax) {
        for (int v = 0; v < V; ++v) {
          const Vec8 y = nan[v] ? Vec8{} + kNaN : acc[v];
          std::memcpy(o + 8 * v, &y, sizeof y);
        }
      } else {
        const int64_t count_w = g.include_pad ? std::min(w0 + g.kw, g.w + g.pr) - w0 : we - ws;
        const float inv = 1.0f / static_cast<float>(count_h * count_w);
        for (int v = 0; v < V; ++v) {
          const Vec8 y = acc[v] * inv;
          std::memcpy(o + 8 * v, &y, sizeof y);
        }
      }
    }
  }
}

using RowsFn = void (*)(const PoolGeometry&, const float*, float*, int64_t, int64_t);

template <int V, bool kMax>
void rows_baseline(const PoolGeometry& g, const float* s, float* d, int64_t r0, int64_t r1) {
  rows<V, kMax>(g, s, d, r0, r1);
}
template <int V, bool kMax>
[[gnu::target("avx2")]] void rows_avx2(const PoolGeometry& g, const float* s, float* d, int64_t r0,
                                       int64_t r1) {
  rows<V, kMax>(g, s, d, r0, r1);
}

template <int V, bool kMax>
RowsFn pick_rows() {
  static const RowsFn fn =
      __builtin_cpu_supports("avx2") ? rows_avx2<V, kMax> : rows_baseline<V, kMax>;
  return fn;
}

}  // namespace

PoolGeometry pool_geometry(const ps::NodeView& node) {
  const ampx_tensor_desc &x = node.input(0), &y = node.output(0);
  PoolGeometry g;
  g.n = x.dims[0], g.c = x.dims[1], g.h = x.dims[2], g.w = x.dims[3];
  g.oh = y.dims[2], g.ow = y.dims[3];
  const std::string_view op = node.op_type();
  if (op == "GlobalAveragePool") {
    g.kh = g.h, g.kw = g.w, g.max = false;
    return g;
  }
  const auto k = node.get_ints("kernel_shape");
  const auto s = node.get_ints("strides", {1, 1});
  const auto pads = node.get_ints("pads", {0, 0, 0, 0});
  g.kh = k[0], g.kw = k[1], g.sh = s[0], g.sw = s[1];
  g.pt = pads[0], g.pl = pads[1], g.pb = pads[2], g.pr = pads[3];
  g.max = op == "MaxPool";
  g.include_pad = !g.max && node.get_int("count_include_pad", 0) != 0;
  return g;
}

void pool_blocked_rows(const PoolGeometry& g, int block, const float* src, float* dst, int64_t r0,
                       int64_t r1) {
  RowsFn fn = nullptr;
  if (block == 8) fn = g.max ? pick_rows<1, true>() : pick_rows<1, false>();
  if (block == 16) fn = g.max ? pick_rows<2, true>() : pick_rows<2, false>();
  if (!fn) throw std::invalid_argument("pool_blocked_rows: block must be 8 or 16");
  fn(g, src, dst, r0, r1);
}

BlockedPoolKernel::BlockedPoolKernel(std::shared_ptr<Context> ctx, const ps::NodeView& node,
                                     std::unique_ptr<host_plugin::HostCopyKernel> primitive,
                                     int threads)
    : ctx_(std::move(ctx)),
      primitive_(std::move(primitive)),
      g_(pool_geometry(node)),
      f32_(node.input(0).dtype == AMPX_DTYPE_F32 && node.output(0).dtype == AMPX_DTYPE_F32),
      threads_(threads),
      in_dims_(dims_of(node.input(0))),
      out_dims_(dims_of(node.output(0))),
      in_bytes_(ps::byte_size(node.input(0))),
      out_bytes_(ps::byte_size(node.output(0))) {}

void BlockedPoolKernel::run_tracked(std::span<const void* const> inputs,
                                    std::span<void* const> outputs,
                                    std::span<const bool> staged_output) {
  LayoutStore& layouts = ctx_->layouts();
  last_ran_loop_ = true;
  if (f32_ && layouts.enabled() && !staged_output[0] && out_bytes_ > 0) {
    if (const dnnl::memory cur = layouts.current(inputs[0], in_bytes_)) {
      const memory::desc md = cur.get_desc();
      for (auto [tag, channels] :
           {std::pair{memory::format_tag::aBcd8b, 8}, std::pair{memory::format_tag::aBcd16b, 16}}) {
        if (md != memory::desc(in_dims_, memory::data_type::f32, tag)) continue;
        // A plain copy: clang (before C++20 support for it in OpenMP
        // regions) refuses a structured binding inside `omp parallel`.
        const int block = channels;
        const dnnl::memory out =
            layouts.produce(outputs[0], out_bytes_, dense_md(out_dims_, memory::data_type::f32),
                            memory::desc(out_dims_, memory::data_type::f32, tag));
        const auto* src = static_cast<const float*>(cur.get_data_handle());
        auto* dst = static_cast<float*>(out.get_data_handle());
        const int64_t rows = g_.n * ((g_.c + block - 1) / block) * g_.oh;
        const int threads = static_cast<int>(std::min<int64_t>(threads_, rows));
#ifdef AMPX_ONEDNN_HAVE_OPENMP
        if (threads > 1) {
#pragma omp parallel num_threads(threads)
          {
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            pool_blocked_rows(g_, block, src, dst, rows * t / nt, rows * (t + 1) / nt);
          }
          return;
        }
#endif
        pool_blocked_rows(g_, block, src, dst, 0, rows);
        return;
      }
    }
  }
  last_ran_loop_ = false;
  primitive_->run_tracked(inputs, outputs, staged_output);
}

std::string BlockedPoolKernel::implementation() const {
  if (!last_ran_loop_) return primitive_->implementation();
  return std::string("loop: blocked ") + (g_.max ? "max" : "average") + " pooling";
}

}  // namespace ampx::onednn
