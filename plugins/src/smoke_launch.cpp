#include "smoke_launch.hpp"

#include <ampx/plugins/guard_bytes.hpp>

#include <ampx/half.hpp>
#include <ampx/node_desc_builder.hpp>
#include <ampx/opset/tolerances.hpp>
#include <ampx/plugin_support.hpp>
#include <ampx/reference/kernels.hpp>

#include <spdlog/fmt/fmt.h>

#include <cstring>
#include <vector>

namespace ampx::plugins::detail {
namespace {

struct SmokeNode {
  const char* op;
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
};

const std::vector<SmokeNode>& smoke_nodes() {
  static const std::vector<SmokeNode> nodes{
      {"Relu", {{2, 8}}, {2, 8}},
      {"Add", {{2, 8}, {2, 8}}, {2, 8}},
      {"Gemm", {{4, 8}, {8, 4}}, {4, 4}},
  };
  return nodes;
}

uint64_t elements(const std::vector<int64_t>& dims) {
  return static_cast<uint64_t>(
      plugin_support::element_count(dims.data(), static_cast<int32_t>(dims.size())));
}

// Small values exact in every dtype (multiples of 1/8 up to 5/8), of both
// signs, different per tensor.
std::vector<unsigned char> input_bytes(ampx_dtype dt, uint64_t n, int tensor) {
  std::vector<unsigned char> out(n * plugin_support::dtype_size(dt));
  for (uint64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(static_cast<int>((i * 7 + tensor * 3) % 11) - 5) * 0.125f;
    if (dt == AMPX_DTYPE_F32) {
      std::memcpy(out.data() + i * 4, &v, 4);
    } else {
      const uint16_t h = dt == AMPX_DTYPE_F16 ? float_to_f16_bits(v) : float_to_bf16_bits(v);
      std::memcpy(out.data() + i * 2, &h, 2);
    }
  }
  return out;
}

std::vector<double> values(ampx_dtype dt, const unsigned char* bytes, uint64_t n) {
  std::vector<double> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (dt == AMPX_DTYPE_F32) {
      float f;
      std::memcpy(&f, bytes + i * 4, 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, bytes + i * 2, 2);
      out[i] = dt == AMPX_DTYPE_F16 ? f16_bits_to_float(h) : bf16_bits_to_float(h);
    }
  }
  return out;
}

// The plugin's buffers of one launch, freed at the end (in the child).
class Buffers {
 public:
  explicit Buffers(const LoadedPlugin& p) : p_(p) {}
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    if (kernel_ != nullptr) p_.api().kernel_destroy(kernel_);
    for (ampx_buffer* b : buffers_) p_.api().buffer_free(b);
  }
  std::vector<ampx_buffer*> buffers_;
  ampx_kernel* kernel_ = nullptr;

 private:
  const LoadedPlugin& p_;
};

// A status: the call is passed over (true), released here.
bool failed(const LoadedPlugin& p, ampx_status* s) {
  if (s == nullptr) return false;
  p.api().status_destroy(s);
  return true;
}

std::string launch_one(const LoadedPlugin& p, int32_t device, const SmokeNode& s, ampx_dtype dt,
                       opset::ComputeMode mode,
                       const std::function<void(const std::string&)>& stage) {
  const ampx_plugin_api& api = p.api();
  plugin_support::NodeDescBuilder described;
  described.reset(s.op, "preflight");
  for (const auto& dims : s.inputs) described.borrow_input(dt, dims, nullptr);
  described.borrow_output(dt, s.output);
  const ampx_node_desc& node = described.desc();
  const std::string what =
      fmt::format("{} {} on device {}", s.op, plugin_support::dtype_name(dt), device);
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  if (failed(p, p.guarded("query_capability",
                          [&] { return api.query_capability(p.instance(), device, &node, &cap); })))
    return "";
  if (cap.support != AMPX_SUPPORT_NATIVE) return "";
  stage("a smoke launch (" + what + ")");

  // Every tensor at offset kGuard of a buffer with kGuard pattern bytes
  // after its (64-byte rounded) end.
  Buffers h(p);
  std::vector<std::vector<unsigned char>> host;  // inputs, then the output
  std::vector<ampx_buffer_view> views;
  std::vector<uint64_t> sizes;
  const auto add = [&](std::vector<unsigned char> bytes) -> bool {
    const uint64_t size = guarded_size(bytes.size());
    std::vector<unsigned char> all(size);
    fill_guard(all);
    std::memcpy(all.data() + kGuard, bytes.data(), bytes.size());
    ampx_buffer* b = nullptr;
    if (failed(p, p.guarded("buffer_alloc",
                            [&] { return api.buffer_alloc(p.instance(), device, size, &b); })) ||
        b == nullptr)
      return false;
    h.buffers_.push_back(b);
    if (failed(p, p.guarded("copy_to_device",
                            [&] { return api.copy_to_device(b, 0, all.data(), size); })))
      return false;
    views.push_back({sizeof(ampx_buffer_view), b, kGuard});
    sizes.push_back(size);
    host.push_back(std::move(all));
    return true;
  };
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (!add(input_bytes(dt, elements(s.inputs[i]), static_cast<int>(i)))) return "";
  const uint64_t out_n = elements(s.output), out_bytes = out_n * plugin_support::dtype_size(dt);
  if (!add(std::vector<unsigned char>(out_bytes, 0))) return "";
  ampx_kernel* kernel = nullptr;
  // A failed prepare may leave anything in `kernel` (ABI 1.0): not kept.
  if (failed(p,
             p.guarded("kernel_prepare",
                       [&] { return api.kernel_prepare(p.instance(), device, &node, &kernel); })) ||
      kernel == nullptr)
    return "";
  h.kernel_ = kernel;
  const size_t n_in = s.inputs.size();
  if (failed(p, p.guarded("kernel_launch", [&] {
        return api.kernel_launch(h.kernel_, views.data(), n_in, views.data() + n_in, 1);
      })))
    return "";
  if (failed(p, p.guarded("synchronize", [&] { return api.synchronize(p.instance(), device); })))
    return "";

  for (size_t t = 0; t <= n_in; ++t) {
    std::vector<unsigned char> got(sizes[t]);
    if (failed(p, p.guarded("copy_to_host", [&] {
          return api.copy_to_host(got.data(), views[t].buffer, 0, got.size());
        })))
      return "";
    if (t < n_in) {
      if (got != host[t]) return what + ": wrote into its input " + std::to_string(t);
      continue;
    }
    if (const auto d = find_guard_damage(got, out_bytes))
      return fmt::format("{}: wrote outside its output (byte {} {} it changed)", what, d->distance,
                         d->side == GuardDamage::Side::kBefore ? "before" : "after");
    host[t] = std::move(got);
  }

  // The reference kernels on the same inputs.
  std::vector<const void*> ref_in;
  for (size_t t = 0; t < n_in; ++t) ref_in.push_back(host[t].data() + kGuard);
  std::vector<unsigned char> want(out_bytes);
  void* ref_out[] = {want.data()};
  reference::make_kernel(node)->run(ref_in, ref_out);
  const std::vector<double> g = values(dt, host[n_in].data() + kGuard, out_n);
  const std::vector<double> w = values(dt, want.data(), out_n);
  const double error = opset::relative_error(g, w), tolerance = opset::tolerance(dt, mode);
  if (!(error <= tolerance))
    return fmt::format("{}: wrong results (relative error {:.3g} above the tolerance {:.3g})", what,
                       error, tolerance);
  return "";
}

}  // namespace

std::string smoke_launch(const LoadedPlugin& p,
                         const std::function<void(const std::string&)>& stage) {
  const opset::ComputeMode mode = opset::compute_mode_of(p.f16_accumulation());
  const auto devices = static_cast<int32_t>(p.device_props().size());
  for (int32_t d = 0; d < devices; ++d)
    for (ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16})
      for (const SmokeNode& s : smoke_nodes())
        if (std::string wrong = launch_one(p, d, s, dt, mode, stage); !wrong.empty()) return wrong;
  return "";
}

}  // namespace ampx::plugins::detail
