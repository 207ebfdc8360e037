// The C ABI side of the host-memory plugins (see host_plugin.hpp).
#include "ampx/cpu_ref/host_plugin.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "ampx/cpu_ref/kernels.hpp"
#include "ampx/plugin_support.hpp"

namespace ps = ampx::plugin_support;
using ampx::cpu_ref::CapabilityPolicy;
using ampx::cpu_ref::CpuKernel;
using ampx::cpu_ref::HostCopyKernel;
using ampx::cpu_ref::HostPluginSpec;

// The opaque handles of the ABI. Each plugin .so has its own copy (hidden
// visibility).
struct ampx_plugin {
  const HostPluginSpec* spec = nullptr;
  std::unique_ptr<CapabilityPolicy> policy;
  int32_t log_level = 2;
  ampx_device_props props{};
};

struct ampx_buffer {
  unsigned char* data = nullptr;  // 64-byte aligned, std::free()
  uint64_t size = 0;
  // The policy's hooks for other copies of these bytes (buffer_free and the
  // copies get no plugin argument). Buffers are freed before the plugin.
  const CapabilityPolicy* policy = nullptr;
};

struct ampx_kernel {
  std::unique_ptr<CpuKernel> kernel;
  const CapabilityPolicy* policy = nullptr;
  HostCopyKernel* tracked = nullptr;  // kernel, when it keeps other copies coherent itself
  std::string where;                  // "node 'x' (Op)"
  struct Slot {
    uint64_t bytes;
    size_t align;  // element size
  };
  std::vector<Slot> ins, outs;
  // Per-launch scratch, kept between launches.
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  std::vector<std::vector<double>> staging;  // 8-byte aligned copies
};

namespace ampx::cpu_ref {

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

using ps::guard;
using ps::StatusError;

[[noreturn]] void invalid(const std::string& what) {
  throw StatusError(AMPX_STATUS_INVALID_ARGUMENT, what);
}

void check_device(int32_t device) {
  if (device != 0) invalid("device index " + std::to_string(device) + " out of range (1 device)");
}

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

// ------------------------------------------------------------ table members

ampx_status_code status_code(const ampx_status* s) {
  return ps::status_code(s);
}
const char* status_message(const ampx_status* s) {
  return ps::status_message(s);
}
void status_destroy(ampx_status* s) {
  ps::status_destroy(s);
}

void plugin_destroy(ampx_plugin* plugin) {
  delete plugin;
}

ampx_status* plugin_info(ampx_plugin* plugin, ampx_plugin_info* out) {
  return guard([&] {
    if (!plugin || !out) invalid("plugin_info: NULL argument");
    ampx_plugin_info info{};
    ps::copy_cstr(info.note, plugin->policy->plugin_note());
    const std::string lib = plugin->policy->library();
    ps::copy_cstr(info.library, lib.empty() ? std::string(plugin->spec->library) : lib);
    ps::write_out_struct(out, info);
  });
}

ampx_status* device_count(ampx_plugin* plugin, int32_t* out) {
  return guard([&] {
    if (!plugin || !out) invalid("device_count: NULL argument");
    *out = 1;
  });
}

ampx_status* device_props(ampx_plugin* plugin, int32_t device, ampx_device_props* out) {
  return guard([&] {
    if (!plugin || !out) invalid("device_props: NULL argument");
    check_device(device);
    ps::write_out_struct(out, plugin->props);
  });
}

ampx_status* query_capability(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                              ampx_capability* out) {
  return guard([&] {
    if (!plugin || !node || !out) invalid("query_capability: NULL argument");
    check_device(device);
    ampx_capability cap{};
    std::string why;
    if (!plugin->policy->can_run(*node, &why)) {
      // The note is about this node already: drop the "node 'x' (Op): " prefix.
      const size_t cut = why.find("): ");
      if (why.rfind("node '", 0) == 0 && cut != std::string::npos) why.erase(0, cut + 3);
      cap.support = AMPX_SUPPORT_UNSUPPORTED;
      cap.cost_us = -1;
      ps::copy_cstr(cap.note, why);
    } else {
      const CapabilityAnswer a = plugin->policy->answer(*node);
      cap.support = a.support;
      cap.cost_us = a.cost_us;
      ps::copy_cstr(cap.note, a.note);
    }
    ps::write_out_struct(out, cap);
  });
}

ampx_status* buffer_alloc(ampx_plugin* plugin, int32_t device, uint64_t bytes, ampx_buffer** out) {
  return guard([&] {
    if (!plugin || !out) invalid("buffer_alloc: NULL argument");
    check_device(device);
    *out = nullptr;
    constexpr uint64_t kAlign = 64;
    if (bytes > SIZE_MAX - kAlign) {
      throw StatusError(AMPX_STATUS_OUT_OF_MEMORY,
                        "buffer_alloc: " + std::to_string(bytes) + " bytes is too large");
    }
    const uint64_t rounded = std::max<uint64_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    auto buf = std::make_unique<ampx_buffer>();
    buf->data =
        static_cast<unsigned char*>(std::aligned_alloc(kAlign, static_cast<size_t>(rounded)));
    if (!buf->data) {
      throw StatusError(AMPX_STATUS_OUT_OF_MEMORY,
                        "buffer_alloc: cannot allocate " + std::to_string(bytes) + " bytes");
    }
    buf->size = bytes;
    buf->policy = plugin->policy.get();
    *out = buf.release();
  });
}

void buffer_free(ampx_buffer* buffer) {
  if (!buffer) return;
  buffer->policy->released(buffer->data, buffer->size);
  std::free(buffer->data);
  delete buffer;
}

// offset + bytes within size, without overflow.
void check_range(const char* fn, uint64_t size, uint64_t offset, uint64_t bytes) {
  if (offset > size || bytes > size - offset) {
    invalid(std::string(fn) + ": range [" + std::to_string(offset) + ", " + std::to_string(offset) +
            " + " + std::to_string(bytes) + ") is outside the buffer of " + std::to_string(size) +
            " bytes");
  }
}

ampx_status* copy_to_device(ampx_buffer* dst, uint64_t dst_offset, const void* src,
                            uint64_t bytes) {
  return guard([&] {
    if (!dst || (!src && bytes)) invalid("copy_to_device: NULL argument");
    check_range("copy_to_device", dst->size, dst_offset, bytes);
    if (!bytes) return;
    dst->policy->before_write(dst->data + dst_offset, bytes);
    std::memmove(dst->data + dst_offset, src, bytes);
  });
}

ampx_status* copy_to_host(void* dst, const ampx_buffer* src, uint64_t src_offset, uint64_t bytes) {
  return guard([&] {
    if (!src || (!dst && bytes)) invalid("copy_to_host: NULL argument");
    check_range("copy_to_host", src->size, src_offset, bytes);
    if (!bytes) return;
    src->policy->before_read(src->data + src_offset, bytes);
    std::memmove(dst, src->data + src_offset, bytes);
  });
}

ampx_status* copy_device_to_device(ampx_buffer* dst, uint64_t dst_offset, const ampx_buffer* src,
                                   uint64_t src_offset, uint64_t bytes) {
  return guard([&] {
    if (!dst || !src) invalid("copy_device_to_device: NULL argument");
    check_range("copy_device_to_device (destination)", dst->size, dst_offset, bytes);
    check_range("copy_device_to_device (source)", src->size, src_offset, bytes);
    if (!bytes) return;
    // Read first: the ranges may overlap, and the write drops other copies.
    src->policy->before_read(src->data + src_offset, bytes);
    dst->policy->before_write(dst->data + dst_offset, bytes);
    std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
  });
}

ampx_status* kernel_prepare(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                            ampx_kernel** out) {
  return guard([&] {
    if (!plugin || !node || !out) invalid("kernel_prepare: NULL argument");
    check_device(device);
    *out = nullptr;
    auto k = std::make_unique<ampx_kernel>();
    try {
      k->kernel = plugin->policy->make_kernel(*node);
    } catch (const UnsupportedNode& e) {
      throw StatusError(AMPX_STATUS_UNSUPPORTED, e.what());
    }
    k->policy = plugin->policy.get();
    k->tracked = dynamic_cast<HostCopyKernel*>(k->kernel.get());
    const ps::NodeView v(*node);
    k->where = v.where();
    for (size_t i = 0; i < v.num_inputs(); ++i)
      k->ins.push_back({ps::byte_size(v.input(i)), ps::dtype_size(v.input(i).dtype)});
    for (size_t i = 0; i < v.num_outputs(); ++i)
      k->outs.push_back({ps::byte_size(v.output(i)), ps::dtype_size(v.output(i).dtype)});
    *out = k.release();
  });
}

// Resolves views[i] to a host pointer after checking that the tensor fits.
unsigned char* resolve(const ampx_kernel& k, const ampx_buffer_view* views, size_t i,
                       const char* what, uint64_t bytes) {
  const ampx_buffer_view& v = *reinterpret_cast<const ampx_buffer_view*>(
      reinterpret_cast<const char*>(views) + i * views[0].struct_size);
  // The label only on failure: this runs for every tensor of every launch.
  const auto label = [&] { return k.where + ": " + what + " " + std::to_string(i); };
  if (!v.buffer) invalid("kernel_launch: " + label() + " has no buffer");
  if (v.offset > v.buffer->size || bytes > v.buffer->size - v.offset) {
    invalid("kernel_launch: " + label() + " needs " + std::to_string(bytes) + " bytes at offset " +
            std::to_string(v.offset) + " but the buffer has " + std::to_string(v.buffer->size));
  }
  return v.buffer->data + v.offset;
}

bool overlap(const void* a, uint64_t na, const void* b, uint64_t nb) {
  if (!na || !nb) return false;
  const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + nb && pb < pa + na;
}

ampx_status* kernel_launch(ampx_kernel* k, const ampx_buffer_view* inputs, size_t num_inputs,
                           const ampx_buffer_view* outputs, size_t num_outputs) {
  return guard([&] {
    if (!k) invalid("kernel_launch: NULL kernel");
    if (num_inputs != k->ins.size() || num_outputs != k->outs.size()) {
      invalid("kernel_launch: " + k->where + " expects " + std::to_string(k->ins.size()) +
              " inputs and " + std::to_string(k->outs.size()) + " outputs, got " +
              std::to_string(num_inputs) + " and " + std::to_string(num_outputs));
    }
    if ((num_inputs && !inputs) || (num_outputs && !outputs)) invalid("kernel_launch: NULL views");
    if (num_inputs && !AMPX_HAS_MEMBER(inputs[0], ampx_buffer_view, offset))
      invalid("kernel_launch: view struct_size too small");
    if (num_outputs && !AMPX_HAS_MEMBER(outputs[0], ampx_buffer_view, offset))
      invalid("kernel_launch: view struct_size too small");
    k->in_ptrs.assign(num_inputs, nullptr);
    k->out_ptrs.assign(num_outputs, nullptr);
    std::vector<unsigned char*> out_real(num_outputs);
    for (size_t i = 0; i < num_inputs; ++i)
      k->in_ptrs[i] = resolve(*k, inputs, i, "input", k->ins[i].bytes);
    for (size_t i = 0; i < num_outputs; ++i)
      out_real[i] = resolve(*k, outputs, i, "output", k->outs[i].bytes);

    // Kernels want element-aligned pointers and outputs apart from inputs;
    // anything else goes through 8-byte aligned staging copies.
    k->staging.resize(num_inputs + num_outputs);
    auto stage = [&](size_t slot, uint64_t bytes) {
      auto& s = k->staging[slot];
      s.resize(static_cast<size_t>((bytes + 7) / 8));
      return reinterpret_cast<unsigned char*>(s.data());
    };
    // Every plain read and write of buffer bytes goes through the policy's
    // hooks: here for the tensors of plain kernels and for staging copies,
    // in the tracked kernel itself for the rest.
    const CapabilityPolicy& pol = *k->policy;
    for (size_t i = 0; i < num_inputs; ++i) {
      const bool aligned =
          reinterpret_cast<uintptr_t>(k->in_ptrs[i]) % std::max<size_t>(k->ins[i].align, 1) == 0;
      if (!k->tracked || !aligned)
        pol.before_read(static_cast<const unsigned char*>(k->in_ptrs[i]), k->ins[i].bytes);
      if (aligned) continue;
      unsigned char* s = stage(i, k->ins[i].bytes);
      std::memcpy(s, k->in_ptrs[i], k->ins[i].bytes);
      k->in_ptrs[i] = s;
    }
    // bool[] rather than vector<bool>: run_tracked takes a span of it.
    std::unique_ptr<bool[]> staged(new bool[num_outputs + 1]());
    for (size_t i = 0; i < num_outputs; ++i) {
      bool need =
          reinterpret_cast<uintptr_t>(out_real[i]) % std::max<size_t>(k->outs[i].align, 1) != 0;
      for (size_t j = 0; !need && j < num_inputs; ++j)
        need = overlap(out_real[i], k->outs[i].bytes, k->in_ptrs[j], k->ins[j].bytes);
      for (size_t j = 0; !need && j < i; ++j)
        need = overlap(out_real[i], k->outs[i].bytes, out_real[j], k->outs[j].bytes);
      staged[i] = need;
      k->out_ptrs[i] = need ? stage(num_inputs + i, k->outs[i].bytes) : out_real[i];
    }
    // An unstaged output is written in place by the run: its other copies go
    // stale now. Never before the run for a staged one, which may overlap an
    // input whose other copy the run is about to read.
    if (!k->tracked) {
      for (size_t i = 0; i < num_outputs; ++i)
        if (!staged[i]) pol.before_write(out_real[i], k->outs[i].bytes);
      k->kernel->run(k->in_ptrs, k->out_ptrs);
    } else {
      k->tracked->run_tracked(k->in_ptrs, k->out_ptrs,
                              std::span<const bool>(staged.get(), num_outputs));
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      if (!staged[i] || !k->outs[i].bytes) continue;
      pol.before_write(out_real[i], k->outs[i].bytes);
      std::memcpy(out_real[i], k->out_ptrs[i], k->outs[i].bytes);
    }
  });
}

void kernel_destroy(ampx_kernel* kernel) {
  delete kernel;
}

ampx_status* synchronize(ampx_plugin* plugin, int32_t device) {
  return guard([&] {
    if (!plugin) invalid("synchronize: NULL plugin");
    check_device(device);  // kernels run synchronously: nothing to wait for
  });
}

void* buffer_host_ptr(ampx_buffer* buffer) {
  return buffer && buffer->policy->host_pointers() ? buffer->data : nullptr;
}

}  // namespace

double cost_hint_us(const ampx_node_desc& node, double flops_per_s, bool convert16) noexcept {
  const WorkEstimate w = estimate_work(node);
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

ampx_status* create_host_plugin(const HostPluginSpec& spec, const ampx_plugin_create_args* args,
                                ampx_plugin** out) noexcept {
  return guard([&] {
    if (!out) invalid("plugin_create: NULL out");
    *out = nullptr;
    ampx_plugin_create_args a{};
    a.struct_size = sizeof a;
    a.log_level = 2;
    if (args) {  // read only what the host's struct holds
      if (AMPX_HAS_MEMBER(*args, ampx_plugin_create_args, log_level)) a.log_level = args->log_level;
      if (AMPX_HAS_MEMBER(*args, ampx_plugin_create_args, options)) a.options = args->options;
    }
    auto p = std::make_unique<ampx_plugin>();
    p->spec = &spec;
    p->log_level = a.log_level;
    p->policy = spec.make_policy(a);
    if (!p->policy) throw StatusError(AMPX_STATUS_INTERNAL, "plugin_create: no capability policy");
    p->props = make_props(spec, *p->policy);
    *out = p.release();
  });
}

ampx_plugin_api host_plugin_api(const HostPluginSpec& spec, PluginCreateFn create) noexcept {
  ampx_plugin_api api{};
  api.struct_size = sizeof api;
  api.abi_major = AMPX_ABI_VERSION_MAJOR;
  api.abi_minor = AMPX_ABI_VERSION_MINOR;
  api.plugin_name = spec.name;
  api.plugin_version = spec.version;
  api.status_code = status_code;
  api.status_message = status_message;
  api.status_destroy = status_destroy;
  api.plugin_create = create;
  api.plugin_destroy = plugin_destroy;
  api.plugin_info = plugin_info;
  api.device_count = device_count;
  api.device_props = device_props;
  api.query_capability = query_capability;
  api.buffer_alloc = buffer_alloc;
  api.buffer_free = buffer_free;
  api.copy_to_device = copy_to_device;
  api.copy_to_host = copy_to_host;
  api.copy_device_to_device = copy_device_to_device;
  api.kernel_prepare = kernel_prepare;
  api.kernel_launch = kernel_launch;
  api.kernel_destroy = kernel_destroy;
  api.synchronize = synchronize;
  api.buffer_host_ptr = buffer_host_ptr;
  return api;
}

}  // namespace ampx::cpu_ref
