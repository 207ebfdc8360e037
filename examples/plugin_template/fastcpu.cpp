// fastcpu: a template ampx backend plugin. Relu and Gemm on the host CPU, in
// f32 and f16, built on the SDK's host-memory plugin (ampx::host_plugin,
// ampx/host_plugin.hpp): the library supplies the whole C ABI
// (buffers, copies, statuses, bounds checks, the function table); the plugin
// supplies a capability policy and its kernels.
//
// What the policy answers, per node (the planner keeps a node 16-bit only on
// `native`, so answer it only for a real 16-bit kernel):
//   - Relu f32, Relu f16: `native`. The f16 kernel works on the bits (clears
//     negative values, keeps NaN), so there is no f32 round trip to hide.
//   - Gemm f32: `native`. Gemm f16: `emulated`: 16-bit storage with f32
//     accumulation, one rounding on store; honest, and what a vendor with a
//     real f16 GEMM would change to `native`.
//   - anything else, mixed dtypes, or a Gemm epilogue other than relu:
//     `unsupported` (can_run false, with the reason); the host places those
//     nodes on another device.
// Structural validation (arity, shapes, attribute values of docs/OPS.md) is
// the reference library's can_run(): a node it rejects never gets here.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/half.hpp"
#include "ampx/host_plugin.hpp"
#include "ampx/opset/validate.hpp"
#include "ampx/plugin_support.hpp"

namespace {

namespace ps = ampx::plugin_support;
using ampx::host_plugin::CapabilityAnswer;
using ampx::host_plugin::CapabilityPolicy;
using ampx::reference::CpuKernel;

// Cost hint for the planner (the capability database measures the truth).
constexpr double kFlopsPerSecond = 4e9;

// The one dtype every tensor of the node has, or AMPX_DTYPE_INVALID.
ampx_dtype common_dtype(const ps::NodeView& v) {
  const ampx_dtype dt = v.output(0).dtype;
  for (size_t i = 0; i < v.num_inputs(); ++i)
    if (v.input(i).dtype != dt) return AMPX_DTYPE_INVALID;
  return dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 ? dt : AMPX_DTYPE_INVALID;
}

int64_t numel(const ampx_tensor_desc& t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

class ReluF32 final : public CpuKernel {
 public:
  explicit ReluF32(int64_t n) : n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    for (int64_t i = 0; i < n_; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];  // NaN stays NaN
  }

 private:
  int64_t n_;
};

class ReluF16 final : public CpuKernel {
 public:
  explicit ReluF16(int64_t n) : n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const uint16_t*>(in[0]);
    auto* y = static_cast<uint16_t*>(out[0]);
    for (int64_t i = 0; i < n_; ++i) {
      const uint16_t h = x[i];
      const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
      y[i] = (h & 0x8000u) && !nan ? uint16_t{0} : h;  // -0 and negatives to +0
    }
  }

 private:
  int64_t n_;
};

// Y = act(alpha * A' * B' + beta * C), f32 accumulation; T is float or the
// f16 bit pattern.
template <typename T>
class GemmKernel final : public CpuKernel {
 public:
  explicit GemmKernel(const ps::NodeView& v)
      : trans_a_(v.get_int("transA", 0) != 0),
        trans_b_(v.get_int("transB", 0) != 0),
        relu_(v.get_string("activation", "none") == "relu"),
        alpha_(static_cast<float>(v.get_float("alpha", 1.0))),
        beta_(static_cast<float>(v.get_float("beta", 1.0))),
        m_(v.output(0).dims[0]),
        n_(v.output(0).dims[1]),
        k_(trans_a_ ? v.input(0).dims[0] : v.input(0).dims[1]),
        has_c_(v.num_inputs() > 2) {
    if (has_c_) {
      // C broadcasts to [M, N]: its trailing dims are 1 or M/N.
      const ampx_tensor_desc& c = v.input(2);
      c_rows_ = c.rank == 2 ? c.dims[0] : 1;
      c_cols_ = c.rank >= 1 ? c.dims[c.rank - 1] : 1;
    }
  }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const T* a = static_cast<const T*>(in[0]);
    const T* b = static_cast<const T*>(in[1]);
    const T* c = has_c_ ? static_cast<const T*>(in[2]) : nullptr;
    T* y = static_cast<T*>(out[0]);
    row_.resize(static_cast<size_t>(n_));
    for (int64_t i = 0; i < m_; ++i) {
      std::fill(row_.begin(), row_.end(), 0.0f);
      if (trans_b_ && !trans_a_) {  // rows of A and B both contiguous: dot products
        const T* arow = a + i * k_;
        for (int64_t j = 0; j < n_; ++j) {
          const T* brow = b + j * k_;
          float acc = 0.0f;
          for (int64_t p = 0; p < k_; ++p) acc += load(arow[p]) * load(brow[p]);
          row_[j] = acc;
        }
      } else {
        for (int64_t p = 0; p < k_; ++p) {
          const float av = load(a[trans_a_ ? p * m_ + i : i * k_ + p]);
          for (int64_t j = 0; j < n_; ++j)
            row_[j] += av * load(b[trans_b_ ? j * k_ + p : p * n_ + j]);
        }
      }
      for (int64_t j = 0; j < n_; ++j) {
        float v = alpha_ * row_[j];
        if (c) v += beta_ * load(c[(c_rows_ == 1 ? 0 : i) * c_cols_ + (c_cols_ == 1 ? 0 : j)]);
        if (relu_ && v < 0.0f) v = 0.0f;
        y[i * n_ + j] = store(v);
      }
    }
  }

 private:
  static float load(T x) {
    if constexpr (std::is_same_v<T, float>)
      return x;
    else
      return ampx::f16_bits_to_float(x);
  }
  static T store(float v) {
    if constexpr (std::is_same_v<T, float>)
      return v;
    else
      return ampx::float_to_f16_bits(v);
  }

  bool trans_a_, trans_b_, relu_;
  float alpha_, beta_;
  int64_t m_, n_, k_;
  bool has_c_;
  int64_t c_rows_ = 1, c_cols_ = 1;
  std::vector<float> row_;  // one output row in f32
};

class FastCpuPolicy final : public CapabilityPolicy {
 public:
  bool can_run(const ampx_node_desc& node, std::string* why) const override {
    if (!ampx::opset::is_valid(node, why)) return false;  // malformed
    const ps::NodeView v(node);
    auto no = [&](const std::string& reason) {
      if (why) *why = reason;
      return false;
    };
    if (v.op_type() != "Relu" && v.op_type() != "Gemm")
      return no("fastcpu runs Relu and Gemm only");
    if (common_dtype(v) == AMPX_DTYPE_INVALID) return no("f32 or f16, the same in every tensor");
    const std::string act = v.get_string("activation", "none");
    if (act != "none" && act != "relu") return no("Gemm epilogue '" + act + "' not implemented");
    return true;
  }

  std::unique_ptr<CpuKernel> make_kernel(const ampx_node_desc& node) const override {
    std::string why;
    const ps::NodeView v(node);
    if (!can_run(node, &why)) throw ampx::opset::UnsupportedNode(v.where() + ": " + why);
    const bool f16 = common_dtype(v) == AMPX_DTYPE_F16;
    if (v.op_type() == "Relu") {
      const int64_t n = numel(v.output(0));
      if (f16) return std::make_unique<ReluF16>(n);
      return std::make_unique<ReluF32>(n);
    }
    if (f16) return std::make_unique<GemmKernel<uint16_t>>(v);
    return std::make_unique<GemmKernel<float>>(v);
  }

  CapabilityAnswer answer(const ampx_node_desc& node) const override {
    const ps::NodeView v(node);
    CapabilityAnswer a;
    const bool f16 = common_dtype(v) == AMPX_DTYPE_F16;
    if (f16 && v.op_type() == "Gemm") {
      a.support = AMPX_SUPPORT_EMULATED;
      a.note = "f16 storage, f32 accumulation";
      a.cost_us = ampx::host_plugin::cost_hint_us(node, kFlopsPerSecond, true);
    } else {
      a.support = AMPX_SUPPORT_NATIVE;
      a.note = f16 ? "f16 bit kernel" : "f32 kernel";
      a.cost_us = ampx::host_plugin::cost_hint_us(node, kFlopsPerSecond, false);
    }
    return a;
  }
};

// Options arrive as "key=value;..." (ampx sends threads=N): this plugin has
// none of its own and ignores every key.
std::unique_ptr<CapabilityPolicy> make_policy(const ampx::plugin_support::PluginOptions&) {
  return std::make_unique<FastCpuPolicy>();
}

constexpr ampx::host_plugin::HostPluginSpec kSpec{"fastcpu", "0.1.0", "fastcpu template kernels",
                                                  "fastcpu template", &make_policy};

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return ampx::host_plugin::host_plugin_entry<kSpec>();
}
