// The C ABI side of the host-memory plugins (see host_plugin.hpp).
#include "ampx/host_plugin.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "ampx/opset/work.hpp"
#include "ampx/plugin_support.hpp"
#include "ampx/reference/kernels.hpp"

namespace ps = ampx::plugin_support;

namespace ampx::host_plugin {

// ------------------------------------------------------------ device info

std::string cpuinfo_field(const char* key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  const size_t klen = std::strlen(key);
  while (std::getline(f, line)) {
    if (line.compare(0, klen, key) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string k = line.substr(0, colon);
    if (k.find_last_not_of(" \t") + 1 != klen) continue;  // exact key only
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t\r") + 1);
    if (!v.empty()) return v;
  }
  return {};
}

static std::string machine_arch() {
  utsname u{};
  if (uname(&u) == 0) return u.machine;
  return "unknown";
}

std::string fingerprint_token(const std::string& s) {
  std::string r;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
    if (ok) {
      r += ch;
    } else if (r.empty() || r.back() != '_') {
      r += '_';
    }
  }
  while (!r.empty() && r.back() == '_') r.pop_back();
  while (!r.empty() && r.front() == '_') r.erase(0, 1);
  return r.empty() ? "unknown" : r;
}

std::string cpu_model_name() {
  std::string model = cpuinfo_field("model name");
  if (model.empty()) model = cpuinfo_field("Model");  // some ARM kernels
  if (model.empty()) model = machine_arch();
  return model;
}

namespace {

ampx_device_props make_props(const HostPluginSpec& spec, const CapabilityPolicy& policy) {
  const std::string model = cpu_model_name();
  std::string vendor = cpuinfo_field("vendor_id");
  if (vendor.empty()) vendor = cpuinfo_field("CPU implementer");
  if (vendor.empty()) vendor = "unknown";

  ampx_device_props p{};
  p.struct_size = sizeof p;
  ps::copy_cstr(p.name, std::string(spec.device_label) + " (" + model + ")");
  ps::copy_cstr(p.vendor, vendor);
  ps::copy_cstr(p.driver_version, spec.version);
  std::string fp = std::string(spec.name) + "/" + spec.version + "/" + fingerprint_token(model);
  const std::string suffix = policy.fingerprint_suffix();
  if (!suffix.empty()) fp += "/" + suffix;
  ps::copy_cstr(p.fingerprint, fp);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  p.memory_bytes =
      pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  p.type = AMPX_DEVICE_CPU;
  p.compute_units = static_cast<int32_t>(std::thread::hardware_concurrency());
  policy.describe_device(p);
  p.struct_size = sizeof p;
  return p;
}

}  // namespace

double cost_hint_us(const ampx_node_desc& node, double flops_per_s, bool convert16) noexcept {
  const opset::WorkEstimate w = opset::estimate_work(node);
  double s = w.flops / flops_per_s + w.bytes / 10e9;
  if (convert16) s += w.elements_16bit * 1e-9;
  return s * 1e6;
}

double cost_hint_us_as_f32(const ampx_node_desc& node, double flops_per_s) noexcept {
  try {
    const ps::NodeView v(node);
    std::vector<ampx_tensor_desc> ins, outs;
    auto widen = [](const ampx_tensor_desc& t) {
      ampx_tensor_desc c{};
      c.struct_size = sizeof c;
      c.dtype = ps::is_16bit_float(t.dtype) ? AMPX_DTYPE_F32 : t.dtype;
      c.rank = t.rank;
      c.dims = t.dims;
      c.const_data = ps::NodeView::const_data(t);
      return c;
    };
    for (size_t i = 0; i < v.num_inputs(); ++i) ins.push_back(widen(v.input(i)));
    for (size_t i = 0; i < v.num_outputs(); ++i) outs.push_back(widen(v.output(i)));
    ampx_node_desc n = node;
    n.struct_size = sizeof n;
    n.inputs = ins.data();
    n.outputs = outs.data();
    return cost_hint_us(n, flops_per_s, false);
  } catch (...) {
    return -1;
  }
}

bool node_uses_16bit(const ampx_node_desc& node, bool* f16, bool* bf16) noexcept {
  bool h = false, b = false;
  try {
    const ps::NodeView v(node);
    for (size_t i = 0; i < v.num_inputs() + v.num_outputs(); ++i) {
      const ampx_dtype dt =
          i < v.num_inputs() ? v.input(i).dtype : v.output(i - v.num_inputs()).dtype;
      h = h || dt == AMPX_DTYPE_F16;
      b = b || dt == AMPX_DTYPE_BF16;
    }
  } catch (...) {
  }
  if (f16) *f16 = h;
  if (bf16) *bf16 = b;
  return h || b;
}

// ------------------------------------------------------------ HostPlugin

HostPlugin::HostPlugin(const HostPluginSpec& spec, const ps::PluginOptions& options)
    : spec_(spec), policy_(spec.make_policy(options)) {
  if (!policy_) throw ps::StatusError(AMPX_STATUS_INTERNAL, "plugin_create: no capability policy");
  props_ = make_props(spec, *policy_);
}

std::string HostPlugin::note() const {
  return policy_->plugin_note();
}

std::string HostPlugin::library() const {
  const std::string lib = policy_->library();
  return lib.empty() ? std::string(spec_.library) : lib;
}

ps::Capability HostPlugin::capability(int32_t, const ps::NodeView& v) const {
  std::string why;
  if (!policy_->can_run(v.desc(), &why)) {
    // The note is about this node already: drop the "node 'x' (Op): " prefix.
    const size_t cut = why.find("): ");
    if (why.rfind("node '", 0) == 0 && cut != std::string::npos) why.erase(0, cut + 3);
    return {AMPX_SUPPORT_UNSUPPORTED, -1, why};
  }
  const CapabilityAnswer a = policy_->answer(v.desc());
  return {a.support, a.cost_us, a.note};
}

HostPlugin::Buffer HostPlugin::alloc(int32_t, uint64_t bytes) {
  constexpr uint64_t kAlign = 64;
  if (bytes > SIZE_MAX - kAlign)
    throw ps::StatusError(AMPX_STATUS_OUT_OF_MEMORY,
                          "buffer_alloc: " + std::to_string(bytes) + " bytes is too large");
  const uint64_t rounded = std::max<uint64_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  Buffer b;
  b.data.reset(static_cast<unsigned char*>(std::aligned_alloc(kAlign, rounded)));
  if (!b.data)
    throw ps::StatusError(AMPX_STATUS_OUT_OF_MEMORY,
                          "buffer_alloc: cannot allocate " + std::to_string(bytes) + " bytes");
  b.size = bytes;
  return b;
}

void HostPlugin::release(Buffer& b) noexcept {
  policy_->released(b.data.get(), b.size);
}

void* HostPlugin::host_ptr(Buffer& b) noexcept {
  return policy_->host_pointers() ? b.data.get() : nullptr;
}

void HostPlugin::write(Buffer& dst, uint64_t offset, const void* src, uint64_t bytes) {
  policy_->before_write(dst.data.get() + offset, bytes);
  std::memmove(dst.data.get() + offset, src, bytes);
}

void HostPlugin::read(void* dst, const Buffer& src, uint64_t offset, uint64_t bytes) {
  policy_->before_read(src.data.get() + offset, bytes);
  std::memmove(dst, src.data.get() + offset, bytes);
}

void HostPlugin::copy(ps::BufferRef<Buffer> dst, ps::BufferRef<Buffer> src, uint64_t bytes) {
  unsigned char* d = dst.buffer.data.get() + dst.offset;
  const unsigned char* s = src.buffer.data.get() + src.offset;
  // Read first: the ranges may overlap, and the write drops other copies.
  policy_->before_read(s, bytes);
  policy_->before_write(d, bytes);
  std::memmove(d, s, bytes);
}

std::unique_ptr<HostPlugin::Kernel> HostPlugin::prepare(int32_t, const ps::NodeView& v) {
  try {
    return std::make_unique<Kernel>(policy_->make_kernel(v.desc()), *policy_);
  } catch (const UnsupportedNode& e) {
    throw ps::StatusError(AMPX_STATUS_UNSUPPORTED, e.what());
  }
}

// ------------------------------------------------------------ kernels

HostPlugin::Kernel::Kernel(std::unique_ptr<CpuKernel> kernel, const CapabilityPolicy& policy)
    : kernel_(std::move(kernel)),
      policy_(policy),
      tracked_(dynamic_cast<HostCopyKernel*>(kernel_.get())) {}

void HostPlugin::Kernel::launch(std::span<const BufferView> ins, std::span<const BufferView> outs) {
  const auto address = [](const BufferView& v) {
    return reinterpret_cast<uintptr_t>(v.buffer->data.get() + v.offset);
  };
  const auto ptr = [](const BufferView& v) { return v.buffer->data.get() + v.offset; };
  const ConversionTotals before = policy_.conversions();
  // Kernels want element-aligned pointers and outputs apart from inputs;
  // anything else goes through 8-byte aligned staging copies.
  const ps::Staging staged = ps::plan_staging(ins, outs, address);
  staging_.resize(ins.size() + outs.size());
  const auto stage = [&](size_t slot, uint64_t bytes) {
    auto& s = staging_[slot];
    s.resize(static_cast<size_t>((bytes + 7) / 8));
    return reinterpret_cast<unsigned char*>(s.data());
  };
  in_ptrs_.assign(ins.size(), nullptr);
  out_ptrs_.assign(outs.size(), nullptr);
  // Every plain read and write of buffer bytes goes through the policy's
  // hooks: here for the tensors of plain kernels and for staging copies,
  // in the tracked kernel itself for the rest.
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!tracked_ || staged.input[i]) policy_.before_read(ptr(ins[i]), ins[i].bytes);
    if (!staged.input[i]) {
      in_ptrs_[i] = ptr(ins[i]);
      continue;
    }
    unsigned char* s = stage(i, ins[i].bytes);
    std::memcpy(s, ptr(ins[i]), ins[i].bytes);
    in_ptrs_[i] = s;
  }
  for (size_t i = 0; i < outs.size(); ++i)
    out_ptrs_[i] = staged.output[i] ? stage(ins.size() + i, outs[i].bytes) : ptr(outs[i]);
  // An unstaged output is written in place by the run: its other copies go
  // stale now. Never before the run for a staged one, which may overlap an
  // input whose other copy the run is about to read.
  if (!tracked_) {
    for (size_t i = 0; i < outs.size(); ++i)
      if (!staged.output[i]) policy_.before_write(ptr(outs[i]), outs[i].bytes);
    kernel_->run(in_ptrs_, out_ptrs_);
  } else {
    // bool[] rather than vector<bool>: run_tracked takes a span of it.
    const std::unique_ptr<bool[]> flags(new bool[outs.size() + 1]());
    for (size_t i = 0; i < outs.size(); ++i) flags[i] = staged.output[i] != 0;
    tracked_->run_tracked(in_ptrs_, out_ptrs_, std::span<const bool>(flags.get(), outs.size()));
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!staged.output[i] || !outs[i].bytes) continue;
    policy_.before_write(ptr(outs[i]), outs[i].bytes);
    std::memcpy(ptr(outs[i]), out_ptrs_[i], outs[i].bytes);
  }
  const ConversionTotals after = policy_.conversions();
  last_ = {after.reorders - before.reorders, after.reorder_us - before.reorder_us,
           after.casts - before.casts, after.cast_us - before.cast_us};
}

ps::KernelReport HostPlugin::Kernel::report() const {
  return {kernel_->implementation(), last_.reorders, last_.reorder_us, last_.casts, last_.cast_us};
}

}  // namespace ampx::host_plugin
