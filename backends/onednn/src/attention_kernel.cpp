#include "attention_kernel.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "ampx/half.hpp"
#include "dnnl_util.hpp"

namespace ampx::onednn {
namespace {

namespace ps = plugin_support;
using memory = dnnl::memory;

// Scores of one chunk of KV heads at most this large (unless one head's
// are larger: then one head per chunk).
constexpr size_t kChunkBytes = size_t{64} << 20;

bool is_float16_32(ampx_dtype dt) {
  return dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_BF16;
}

// The node as the kernel sees it (the reference kernel's AttentionShape).
struct Geometry {
  int64_t B = 0, Hq = 0, S = 0, E = 0, Hkv = 0, T = 0, Ev = 0, g = 1;
  ampx_dtype dtype = AMPX_DTYPE_F32;
  // The mask broadcast into [B, Hq, S, Tm]: element strides, 0 where
  // broadcast; keys past Tm are masked.
  bool has_mask = false, mask_bool = false;
  int64_t mb = 0, mh = 0, mi = 0, Tm = 0;
  bool has_len = false, len64 = true;
  float scale = 1, softcap = 0;
  bool causal = false, softmax_f64 = false;
  int64_t past = 0, left = -1, right = -1, mode = -1;
  int64_t chunk = 1;  // KV heads (of B·Hkv) per chunk, a divisor
};

Geometry geometry(const ps::NodeView& v) {
  const ampx_tensor_desc &q = v.input(0), &k = v.input(1), &val = v.input(2);
  Geometry g;
  g.B = q.dims[0], g.Hq = q.dims[1], g.S = q.dims[2], g.E = q.dims[3];
  g.Hkv = k.dims[1], g.T = k.dims[2], g.Ev = val.dims[3];
  g.g = g.Hkv > 0 ? g.Hq / g.Hkv : 1;
  g.dtype = q.dtype;
  if (v.num_inputs() > 3) {
    const ampx_tensor_desc& m = v.input(3);
    g.has_mask = true;
    g.mask_bool = m.dtype == AMPX_DTYPE_BOOL;
    int64_t d[4] = {1, 1, 1, 1};
    for (int32_t i = 0; i < m.rank; ++i) d[4 - m.rank + i] = m.dims[i];
    g.Tm = d[3];
    g.mi = d[2] == 1 ? 0 : d[3];
    g.mh = d[1] == 1 ? 0 : d[2] * d[3];
    g.mb = d[0] == 1 ? 0 : d[1] * d[2] * d[3];
  }
  if (v.num_inputs() > 4) {
    g.has_len = true;
    g.len64 = v.input(4).dtype == AMPX_DTYPE_I64;
  }
  g.scale = static_cast<float>(v.get_float("scale", 1.0 / std::sqrt(double(g.E))));
  g.softcap = static_cast<float>(v.get_float("softcap", 0.0));
  g.causal = v.get_int("is_causal", 0) != 0;
  g.past = v.get_int("past_length", 0);
  g.left = v.get_int("left_window", -1);
  g.right = v.get_int("right_window", -1);
  g.mode = v.get_int("qk_output", -1);
  g.softmax_f64 = v.get_int("softmax_f64", 0) != 0;
  const int64_t heads = g.B * g.Hkv;
  const auto head_bytes = static_cast<size_t>(g.g * g.S * g.T) * sizeof(float);
  for (int64_t c = heads; c >= 1; --c)
    if (heads % c == 0 && (c == 1 || static_cast<size_t>(c) * head_bytes <= kChunkBytes)) {
      g.chunk = c;
      break;
    }
  return g;
}

// Whether the primitives are even tried: f32/f16/bf16 Q, K, V (one dtype:
// the op set's), a float mask in that dtype, and no empty dimension.
bool fits(const ps::NodeView& v) {
  for (size_t i = 0; i < 3; ++i)
    if (!is_float16_32(v.input(i).dtype)) return false;
  for (size_t i = 0; i < v.num_inputs(); ++i)
    if (ps::element_count(v.input(i)) == 0) return false;
  for (size_t i = 0; i < v.num_outputs(); ++i)
    if (ps::element_count(v.output(i)) == 0) return false;
  return true;
}

struct Plans {
  dnnl::matmul::primitive_desc qk, pv;
};

// The two products of one chunk of `g.chunk` KV heads.
Plans plan(const Geometry& g, const dnnl::engine& eng) {
  const memory::data_type dt = to_dnnl(g.dtype), f32 = memory::data_type::f32;
  const int64_t n = g.chunk, M = g.g * g.S;
  const memory::desc q_md({n, M, g.E}, dt, dims_t{M * g.E, g.E, 1});
  const memory::desc kt_md({n, g.E, g.T}, dt, dims_t{g.T * g.E, 1, g.E});  // Kᵀ by strides
  const memory::desc s_md({n, M, g.T}, f32, dims_t{M * g.T, g.T, 1});
  dnnl::primitive_attr qk_attr = plan_attr();
  qk_attr.set_output_scales(0, {g.scale});
  const memory::desc p_md({n, M, g.T}, dt, dims_t{M * g.T, g.T, 1});
  const memory::desc v_md({n, g.T, g.Ev}, dt, dims_t{g.T * g.Ev, g.Ev, 1});
  const memory::desc y_md({n, M, g.Ev}, dt, dims_t{M * g.Ev, g.Ev, 1});
  return {dnnl::matmul::primitive_desc(dnnl::matmul::desc(q_md, kt_md, s_md), qk_attr, eng),
          dnnl::matmul::primitive_desc(dnnl::matmul::desc(p_md, v_md, y_md), plan_attr(), eng)};
}

float load(ampx_dtype dt, const void* p, int64_t i) {
  switch (dt) {
    case AMPX_DTYPE_F16:
      return f16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
    case AMPX_DTYPE_BF16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

void store(ampx_dtype dt, void* p, int64_t i, float x) {
  switch (dt) {
    case AMPX_DTYPE_F16:
      static_cast<uint16_t*>(p)[i] = float_to_f16_bits(x);
      break;
    case AMPX_DTYPE_BF16:
      static_cast<uint16_t*>(p)[i] = float_to_bf16_bits(x);
      break;
    default:
      static_cast<float*>(p)[i] = x;
  }
}

// Step 2 for one row of scores (reference ops_attention.cpp's row(), the
// same f32 expressions in the same order): `s` holds scale·q·k for the T
// keys and is left holding the probabilities.
class RowSoftmax {
 public:
  RowSoftmax(const Geometry& g, const void* mask, const void* lens, void* qk)
      : g_(g), mask_(mask), lens_(lens), qk_(qk) {}

  void operator()(int64_t r, float* s) const {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const int64_t i = r % g_.S, h = (r / g_.S) % g_.Hq, b = r / (g_.S * g_.Hq);
    const int64_t len = g_.has_len ? kv_len(b) : g_.T;
    const int64_t offset = g_.has_len ? len - g_.S : g_.past;
    const float cap = g_.softcap;
    const int64_t at0 = qk_ ? r * g_.T : 0;
    float bias_max = kNegInf, m = kNegInf;
    bool nan = false;
    for (int64_t j = 0; j < g_.T; ++j) {
      float x = s[j];
      if (cap > 0) x = cap * std::tanh(x / cap);
      if (qk_ && g_.mode <= 1) store(g_.dtype, qk_, at0 + j, x);
      const float add = bias(b, h, i, j, len, offset);
      bias_max = std::max(bias_max, add);
      x += add;
      s[j] = x;
      nan = nan || std::isnan(x);
      m = std::max(m, x);
      if (qk_ && g_.mode == 2) store(g_.dtype, qk_, at0 + j, x);
    }
    if (bias_max == kNegInf || (m == kNegInf && !nan)) {
      std::fill(s, s + g_.T, 0.0f);  // fully masked: no attendable key
    } else if (nan) {
      std::fill(s, s + g_.T, std::numeric_limits<float>::quiet_NaN());
    } else if (g_.softmax_f64) {
      softmax<double>(s, m);
    } else {
      softmax<float>(s, m);
    }
    if (qk_ && g_.mode == 3)
      for (int64_t j = 0; j < g_.T; ++j) store(g_.dtype, qk_, at0 + j, s[j]);
  }

 private:
  int64_t kv_len(int64_t b) const {
    return g_.len64 ? static_cast<const int64_t*>(lens_)[b] : static_cast<const int32_t*>(lens_)[b];
  }

  float bias(int64_t b, int64_t h, int64_t i, int64_t j, int64_t len, int64_t offset) const {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    float add = 0;
    if (g_.has_mask) {
      const int64_t at = b * g_.mb + h * g_.mh + i * g_.mi + j;
      if (j >= g_.Tm)
        add = kNegInf;  // ONNX pads a short mask with -inf / false
      else if (g_.mask_bool)
        add = static_cast<const uint8_t*>(mask_)[at] ? 0.0f : kNegInf;
      else
        add = load(g_.dtype, mask_, at);
    }
    const int64_t diff = i + offset - j;  // > 0: key j precedes the query
    if (g_.causal && diff < 0) add = kNegInf;
    if (g_.left >= 0 && diff > g_.left) add = kNegInf;
    if (g_.right >= 0 && -diff > g_.right) add = kNegInf;
    if (j >= len) add = kNegInf;
    return add;
  }

  // The reference's softmax: exp(x - m) / sum, in A. In f32 each exp is
  // kept for the division (the reference computes it twice: the same
  // value, half the exps); in f64 it would not fit back into x.
  template <class A>
  void softmax(float* x, float m) const {
    A sum = 0;
    if constexpr (std::is_same_v<A, float>) {
      for (int64_t j = 0; j < g_.T; ++j) sum += x[j] = std::exp(x[j] - m);
      for (int64_t j = 0; j < g_.T; ++j) x[j] = x[j] / sum;
      return;
    }
    for (int64_t j = 0; j < g_.T; ++j) sum += std::exp(A(x[j]) - A(m));
    for (int64_t j = 0; j < g_.T; ++j) x[j] = static_cast<float>(std::exp(A(x[j]) - A(m)) / sum);
  }

  const Geometry& g_;
  const void* mask_;
  const void* lens_;
  void* qk_;
};

class AttentionKernel final : public reference::CpuKernel {
 public:
  AttentionKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
      : ctx_(std::move(ctx)), g_(geometry(v)), threads_(threads), where_(v.where()) {
    const Plans p = plan(g_, ctx_->engine());
    qk_scratch_ = p.qk.scratchpad_desc().get_size();
    pv_scratch_ = p.pv.scratchpad_desc().get_size();
    const dnnl::engine& eng = ctx_->engine();
    q_ = memory(p.qk.src_desc(), eng, DNNL_MEMORY_NONE);
    k_ = memory(p.qk.weights_desc(), eng, DNNL_MEMORY_NONE);
    s_ = memory(p.qk.dst_desc(), eng, DNNL_MEMORY_NONE);
    p_ = memory(p.pv.src_desc(), eng, DNNL_MEMORY_NONE);
    v_ = memory(p.pv.weights_desc(), eng, DNNL_MEMORY_NONE);
    y_ = memory(p.pv.dst_desc(), eng, DNNL_MEMORY_NONE);
    qk_pad_ = memory(p.qk.scratchpad_desc(), eng, DNNL_MEMORY_NONE);
    pv_pad_ = memory(p.pv.scratchpad_desc(), eng, DNNL_MEMORY_NONE);
    impl_ = "attention: " + describe_impl(p.qk) + ", f32 softmax loop, " + describe_impl(p.pv);
    // oneDNN fixes a primitive's threads at creation (PrimitiveKernel).
    ctx_->run(
        [&] {
          qk_prim_ = dnnl::matmul(p.qk);
          pv_prim_ = dnnl::matmul(p.pv);
        },
        threads_);
  }

  std::string implementation() const override { return impl_; }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    ctx_->count_kernel_run(true);
    try {
      ctx_->launch([&] { run_chunks(in, out); }, threads_);
    } catch (const dnnl::error& e) {
      throw ps::StatusError(AMPX_STATUS_INTERNAL, where_ + ": oneDNN: " + e.what());
    }
  }

 private:
  void run_chunks(std::span<const void* const> in, std::span<void* const> out) {
    const size_t es = static_cast<size_t>(ps::dtype_size(g_.dtype));
    const bool wide = g_.dtype == AMPX_DTYPE_F32;
    const int64_t M = g_.g * g_.S, rows = g_.chunk * M;
    const size_t s_bytes = static_cast<size_t>(rows * g_.T) * sizeof(float);
    const size_t p_bytes = wide ? 0 : static_cast<size_t>(rows * g_.T) * es;
    const size_t pad = round_up(std::max(qk_scratch_, pv_scratch_));
    // One buffer: the primitives' scratchpad, the f32 scores, the 16-bit P.
    auto* base = static_cast<std::byte*>(ctx_->scratchpad(pad + round_up(s_bytes) + p_bytes));
    auto* scores = reinterpret_cast<float*>(base + pad);
    std::byte* p16 = wide ? reinterpret_cast<std::byte*>(scores) : base + pad + round_up(s_bytes);
    qk_pad_.set_data_handle(base);
    pv_pad_.set_data_handle(base);
    s_.set_data_handle(scores);
    p_.set_data_handle(p16);
    const RowSoftmax softmax(g_, g_.has_mask ? in[3] : nullptr, g_.has_len ? in[4] : nullptr,
                             g_.mode >= 0 ? out[1] : nullptr);
    const auto* q = static_cast<const std::byte*>(in[0]);
    const auto* k = static_cast<const std::byte*>(in[1]);
    const auto* v = static_cast<const std::byte*>(in[2]);
    auto* y = static_cast<std::byte*>(out[0]);
    dnnl::stream& st = ctx_->stream();
    for (int64_t c0 = 0; c0 < g_.B * g_.Hkv; c0 += g_.chunk) {
      q_.set_data_handle(const_cast<std::byte*>(q + static_cast<size_t>(c0 * M * g_.E) * es));
      k_.set_data_handle(const_cast<std::byte*>(k + static_cast<size_t>(c0 * g_.T * g_.E) * es));
      v_.set_data_handle(const_cast<std::byte*>(v + static_cast<size_t>(c0 * g_.T * g_.Ev) * es));
      y_.set_data_handle(y + static_cast<size_t>(c0 * M * g_.Ev) * es);
      ctx_->count_executed(qk_prim_);
      qk_prim_.execute(st, args(q_, k_, s_, qk_pad_, qk_scratch_));
      st.wait();
      softmax_rows(softmax, c0 * M, rows, scores, p16);
      ctx_->count_executed(pv_prim_);
      pv_prim_.execute(st, args(p_, v_, y_, pv_pad_, pv_scratch_));
      st.wait();
    }
  }

  // Each row on one thread, rows independent: the bits do not depend on
  // the thread count.
  void softmax_rows(const RowSoftmax& softmax, int64_t row0, int64_t rows, float* scores,
                    std::byte* p16) const {
    const int64_t T = g_.T;
    const bool wide = g_.dtype == AMPX_DTYPE_F32;
    const int team = std::max(1, std::min(omp_get_max_threads(), static_cast<int>(rows)));
#pragma omp parallel for num_threads(team) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      float* s = scores + r * T;
      softmax(row0 + r, s);
      if (!wide)
        for (int64_t j = 0; j < T; ++j) store(g_.dtype, p16, r * T + j, s[j]);
    }
  }

  static std::unordered_map<int, memory> args(const memory& src, const memory& wei,
                                              const memory& dst, const memory& pad,
                                              size_t pad_bytes) {
    std::unordered_map<int, memory> a = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (pad_bytes > 0) a.emplace(DNNL_ARG_SCRATCHPAD, pad);
    return a;
  }

  static size_t round_up(size_t n) {
    return (n + 63) / 64 * 64;
  }

  std::shared_ptr<Context> ctx_;
  Geometry g_;
  int threads_;
  std::string where_, impl_;
  size_t qk_scratch_ = 0, pv_scratch_ = 0;
  memory q_, k_, s_, p_, v_, y_, qk_pad_, pv_pad_;
  dnnl::primitive qk_prim_, pv_prim_;
};

std::string dtype_word(ampx_dtype dt) {
  return dt == AMPX_DTYPE_BF16 ? "bf16" : dt == AMPX_DTYPE_F16 ? "f16" : ps::dtype_name(dt);
}

}  // namespace

host_plugin::CapabilityAnswer answer_attention(const ps::NodeView& v, const Context& ctx,
                                               double fast_flops, double slow_flops) {
  const bool uses16 = host_plugin::node_uses_16bit(v.desc());
  host_plugin::CapabilityAnswer a;
  const ampx_tensor_desc& q = v.input(0);
  const std::string what = dtype_word(q.dtype) + " Attention";
  // The reference loop (16-bit widened to f32), saying why.
  const auto loop = [&](const std::string& why) {
    a.support = uses16 ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE;
    a.note = what + ": " + why + (uses16 ? "; plain loop, 16-bit widened" : "; plain loop");
    a.cost_us = host_plugin::cost_hint_us(v.desc(), slow_flops, uses16);
    a.reference_kernel = true;
    return a;
  };
  if (!fits(v)) return loop("no oneDNN form (empty or non-float tensors)");
  try {
    const Plans p = plan(geometry(v), ctx.engine());
    for (const dnnl::matmul::primitive_desc* pd : {&p.qk, &p.pv})
      if (is_reference_impl(*pd))
        return loop("oneDNN matmul has " + std::string(pd->impl_info_str()) + " only on " +
                    ctx.isa());
    a.support = AMPX_SUPPORT_NATIVE;
    a.note = "oneDNN matmul " + std::string(p.qk.impl_info_str()) + " + f32 softmax loop + " +
             std::string(p.pv.impl_info_str());
    a.cost_us = host_plugin::cost_hint_us(v.desc(), fast_flops, false);
    return a;
  } catch (const dnnl::error&) {
    // (The note holds 127 bytes: oneDNN's message would cut it.)
    return loop("no oneDNN matmul on " + ctx.isa());
  }
}

std::unique_ptr<reference::CpuKernel> make_attention_kernel(std::shared_ptr<Context> ctx,
                                                            const ps::NodeView& v, int threads) {
  try {
    return std::make_unique<AttentionKernel>(std::move(ctx), v, threads);
  } catch (const dnnl::error& e) {
    throw ps::StatusError(AMPX_STATUS_INTERNAL, v.where() + ": oneDNN: " + e.what());
  }
}

bool fill_attention_input(const ps::NodeView& v, size_t slot, void* p) {
  const ampx_tensor_desc& t = v.input(slot);
  const uint64_t n = ps::element_count(t);
  if (slot == 3 && t.dtype == AMPX_DTYPE_BOOL) {
    std::memset(p, 1, n);
    return true;
  }
  if (slot == 4) {
    const int64_t T = v.input(1).dims[2];
    for (uint64_t i = 0; i < n; ++i) {
      if (t.dtype == AMPX_DTYPE_I64)
        static_cast<int64_t*>(p)[i] = T;
      else
        static_cast<int32_t*>(p)[i] = static_cast<int32_t>(T);
    }
    return true;
  }
  return false;
}

}  // namespace ampx::onednn
