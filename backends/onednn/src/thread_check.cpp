#include "thread_check.hpp"

#include <chrono>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ampx/half.hpp"
#include "ampx/host_plugin.hpp"
#include "ampx/opset/catalogue.hpp"
#include "ampx/opset/dropout_draw.hpp"

namespace ampx::onednn {
namespace {

namespace ps = plugin_support;

// 8-byte aligned storage for one tensor (never empty, so data() is a real
// address even for a tensor of zero elements).
using Words = std::vector<uint64_t>;
Words words_for(uint64_t bytes) {
  return Words(static_cast<size_t>(bytes / 8 + 1));
}

// The node's inputs (drawn, or its constants) and room for two runs'
// outputs.
struct CheckData {
  std::vector<Words> storage;
  std::vector<const void*> in;
  std::vector<void*> out[2];
  std::vector<uint64_t> out_bytes;
};

// Runs k on the data. Every output counts as staged, so that a kernel that
// keeps blocked copies (HostCopyKernel) writes plain bytes and leaves no
// shadow of these scratch addresses in the layout store.
void run_once(reference::CpuKernel& k, const CheckData& d, std::span<void* const> out) {
  if (auto* tracked = dynamic_cast<host_plugin::HostCopyKernel*>(&k)) {
    // std::vector<bool> has no data(): the flags as an array of bool.
    const auto flags = std::make_unique<bool[]>(out.size() + 1);
    for (size_t i = 0; i < out.size(); ++i) flags[i] = true;
    tracked->run_tracked(d.in, out, std::span<const bool>(flags.get(), out.size()));
    return;
  }
  k.run(d.in, out);
}

}  // namespace

bool fill_drawn(ampx_dtype dtype, uint64_t n, uint64_t slot, void* p) {
  // A draw in [0.5, 1.5) for element i: the op set's dropout draw, the same
  // on every machine.
  const auto draw = [slot](uint64_t i) { return 0.5f + opset::dropout_draw(slot << 40, i); };
  switch (dtype) {
    case AMPX_DTYPE_F32:
      for (uint64_t i = 0; i < n; ++i) static_cast<float*>(p)[i] = draw(i);
      return true;
    case AMPX_DTYPE_F64:
      for (uint64_t i = 0; i < n; ++i) static_cast<double*>(p)[i] = draw(i);
      return true;
    case AMPX_DTYPE_F16:
      for (uint64_t i = 0; i < n; ++i) static_cast<uint16_t*>(p)[i] = float_to_f16_bits(draw(i));
      return true;
    case AMPX_DTYPE_BF16:
      for (uint64_t i = 0; i < n; ++i) static_cast<uint16_t*>(p)[i] = float_to_bf16_bits(draw(i));
      return true;
    default:
      return false;
  }
}

int first_differing_output(Context& ctx, std::span<void* const> many, std::span<void* const> one,
                           std::span<const uint64_t> bytes) {
  if (ctx.selfcheck_perturb() && !bytes.empty() && bytes[0] > 0)
    *static_cast<unsigned char*>(many[0]) ^= 1;
  int differs = -1;
  for (size_t i = 0; i < bytes.size() && differs < 0; ++i)
    if (std::memcmp(many[i], one[i], bytes[i]) != 0) differs = static_cast<int>(i);
  ctx.count_thread_check(differs >= 0);
  return differs;
}

std::unique_ptr<reference::CpuKernel> make_thread_count_free(Context& ctx, const ps::NodeView& v,
                                                             int threads, const KernelMaker& make,
                                                             const InputFill& fill) {
  if (threads <= 1 || ctx.determinism() == Determinism::kFastest ||
      opset::is_data_movement(v.op_type()))
    return make(threads);
  const auto log = [&](const std::string& what) {
    ps::plugin_log(ctx.log_level(), ps::LogLevel::info, "onednn", v.where() + ": " + what);
  };

  CheckData d;
  for (size_t i = 0; i < v.num_inputs(); ++i) {
    const ampx_tensor_desc& t = v.input(i);
    if (const void* c = ps::NodeView::const_data(t)) {
      d.in.push_back(c);  // borrowed for the prepare call, as the kernel's own
      continue;
    }
    Words& w = d.storage.emplace_back(words_for(ps::byte_size(t)));
    if (!fill_drawn(t.dtype, ps::element_count(t), i, w.data()) && !(fill && fill(i, w.data()))) {
      ctx.count_thread_check(true);
      log("on one thread: input " + std::to_string(i) + " (" + ps::dtype_name(t.dtype) +
          ") picks the kernel's path at run time, so no drawn input can check its bits at " +
          std::to_string(threads) + " threads");
      return make(1);
    }
    d.in.push_back(w.data());
  }
  for (size_t i = 0; i < v.num_outputs(); ++i) {
    d.out_bytes.push_back(ps::byte_size(v.output(i)));
    for (auto& out : d.out) out.push_back(d.storage.emplace_back(words_for(d.out_bytes[i])).data());
  }

  std::unique_ptr<reference::CpuKernel> many = make(threads), one = make(1);
  const auto start = std::chrono::steady_clock::now();
  std::string differs;
  try {
    const Context::Uncounted quiet(ctx);  // these runs are not the node's
    run_once(*many, d, d.out[0]);
    run_once(*one, d, d.out[1]);
  } catch (const std::exception& e) {
    // A drawn input the node rejects (a data-dependent error): no verdict,
    // so the kernel that needs none.
    differs = std::string("the check's run failed (") + e.what() + ")";
    ctx.count_thread_check(true);
  }
  if (differs.empty()) {
    const int i = first_differing_output(ctx, d.out[0], d.out[1], d.out_bytes);
    if (i >= 0)
      differs = "output " + std::to_string(i) + "'s bits at " + std::to_string(threads) +
                " threads differ from one thread's";
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (differs.empty()) return many;
  log("on one thread: " + differs + " (checked in " + std::to_string(ms) + " ms)");
  return one;
}

}  // namespace ampx::onednn
