// The Vulkan compute backend plugin (devices vulkan:0, ...): the C ABI v1
// table over src/. Every entry point is wrapped in guard(): no exception
// crosses the boundary. Launches are recorded into the device's command
// buffer and submitted at synchronize / copy_to_host (src/stream.hpp).
// Options: "threads=N" is accepted and ignored (the host passes it to every
// plugin); anything else is an error.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/plugin_support.hpp"
#include "capability.hpp"
#include "device.hpp"
#include "instance.hpp"
#include "kernel.hpp"

namespace ps = ampx::plugin_support;
namespace vk = ampx::vulkan;
using ps::guard;
using ps::StatusError;

namespace {
constexpr const char* kPluginVersion = "0.1.0";
}

struct ampx_plugin {
  std::unique_ptr<vk::Instance> instance;
  std::vector<std::unique_ptr<vk::Device>> devices;
  std::string note;
  std::string library;
};

struct ampx_buffer {
  vk::Device* device = nullptr;
  vk::Allocation alloc;
  uint64_t size = 0;
  uint64_t id = 0;
};

struct ampx_kernel {
  std::unique_ptr<vk::Kernel> kernel;
  std::vector<vk::BufferRef> ins, outs;  // per-launch scratch
};

namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw StatusError(AMPX_STATUS_INVALID_ARGUMENT, what);
}

vk::Device& device_at(ampx_plugin* p, int32_t device) {
  if (!p) invalid("NULL plugin");
  if (device < 0 || static_cast<size_t>(device) >= p->devices.size())
    invalid("device index " + std::to_string(device) + " out of range (" +
            std::to_string(p->devices.size()) + " Vulkan devices)");
  return *p->devices[static_cast<size_t>(device)];
}

void check_range(const char* fn, uint64_t size, uint64_t offset, uint64_t bytes) {
  if (offset > size || bytes > size - offset)
    invalid(std::string(fn) + ": range [" + std::to_string(offset) + ", " + std::to_string(offset) +
            " + " + std::to_string(bytes) + ") is outside the buffer of " + std::to_string(size) +
            " bytes");
}

// Device-side copy between two buffers of one device, recorded in order.
void record_copy(vk::Device& d, VkBuffer src, uint64_t so, VkBuffer dst, uint64_t doff,
                 uint64_t bytes, const std::string& what) {
  VkCommandBuffer cmd = d.stream().record(what);
  VkBufferCopy region{so, doff, bytes};
  vkCmdCopyBuffer(cmd, src, dst, 1, &region);
}

ampx_status_code status_code(const ampx_status* s) {
  return ps::status_code(s);
}
const char* status_message(const ampx_status* s) {
  return ps::status_message(s);
}
void status_destroy(ampx_status* s) {
  ps::status_destroy(s);
}

ampx_status* plugin_create(const ampx_plugin_create_args* args, ampx_plugin** out) {
  return guard([&] {
    if (!out) invalid("plugin_create: NULL out");
    *out = nullptr;
    const char* options = nullptr;
    if (args && AMPX_HAS_MEMBER(*args, ampx_plugin_create_args, options)) options = args->options;
    for (const auto& [key, value] : ps::split_options(options)) {
      // threads: validated, not used (a GPU API); other keys are ignored
      // (backend_api.h, "Options").
      if (key == "threads") ps::int_option("vulkan", key, value, 0, 4096);
    }
    auto p = std::make_unique<ampx_plugin>();
    p->instance = std::make_unique<vk::Instance>();
    const uint32_t api = p->instance->api_version();
    p->library = "Vulkan " + std::to_string(VK_API_VERSION_MAJOR(api)) + "." +
                 std::to_string(VK_API_VERSION_MINOR(api)) + " (loader)";
    if (!p->instance->ok()) {
      p->note = p->instance->reason();
      *out = p.release();
      return;
    }
    std::string skipped;
    std::vector<vk::PhysicalDevice> pds;
    try {
      pds = vk::enumerate_devices(p->instance->get(), &skipped);
    } catch (const StatusError& e) {
      p->note = std::string("no Vulkan devices: ") + e.what();
    }
    for (auto& pd : pds) {
      const int32_t index = static_cast<int32_t>(p->devices.size());
      try {
        p->devices.push_back(std::make_unique<vk::Device>(pd, index));
      } catch (const StatusError& e) {
        skipped += pd.name + ": " + e.what() + "; ";
      }
    }
    std::string note;
    if (p->devices.empty()) {
      note = "no Vulkan device with a compute queue";
      if (!skipped.empty()) note += " (" + skipped + ")";
    } else {
      const vk::PhysicalDevice& d0 = p->devices[0]->info();
      note = std::to_string(p->devices.size()) + " device(s); vulkan:0 API " + d0.api_string() +
             ", subgroup " + std::to_string(d0.subgroup_size) + ", " + d0.features_string();
      if (!skipped.empty()) note += "; skipped: " + skipped;
    }
    const std::string val = p->instance->validation_note();
    if (!val.empty()) note += "; " + val;
    if (p->note.empty()) p->note = note;
    *out = p.release();
  });
}

void plugin_destroy(ampx_plugin* plugin) {
  if (!plugin) return;
  plugin->devices.clear();  // before the instance
  plugin->instance.reset();
  delete plugin;
}

ampx_status* plugin_info(ampx_plugin* plugin, ampx_plugin_info* out) {
  return guard([&] {
    if (!plugin || !out) invalid("plugin_info: NULL argument");
    ampx_plugin_info info{};
    std::string note = plugin->note;
    // The validation count changes as the plugin runs: report the current one.
    if (plugin->instance && plugin->instance->validation_on()) {
      const size_t at = note.find("Khronos validation on");
      if (at != std::string::npos) note.erase(at);
      note += plugin->instance->validation_note();
    }
    ps::copy_cstr(info.note, note);
    ps::copy_cstr(info.library, plugin->library);
    ps::write_out_struct(out, info);
  });
}

ampx_status* device_count(ampx_plugin* plugin, int32_t* out) {
  return guard([&] {
    if (!plugin || !out) invalid("device_count: NULL argument");
    *out = static_cast<int32_t>(plugin->devices.size());
  });
}

ampx_status* device_props(ampx_plugin* plugin, int32_t device, ampx_device_props* out) {
  return guard([&] {
    if (!out) invalid("device_props: NULL argument");
    const vk::PhysicalDevice& d = device_at(plugin, device).info();
    ampx_device_props p{};
    ps::copy_cstr(p.name, d.name);
    ps::copy_cstr(p.vendor, d.vendor);
    ps::copy_cstr(p.driver_version,
                  d.driver_name + " " + d.driver_info + ", Vulkan " + d.api_string());
    ps::copy_cstr(p.fingerprint, d.fingerprint(kPluginVersion));
    p.memory_bytes = d.device_local_bytes;
    p.type = d.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? AMPX_DEVICE_CPU
             : (d.type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                d.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                d.type == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU)
                 ? AMPX_DEVICE_GPU
                 : AMPX_DEVICE_OTHER;
    p.compute_units = 0;  // Vulkan does not say
    ps::write_out_struct(out, p);
  });
}

ampx_status* query_capability(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                              ampx_capability* out) {
  return guard([&] {
    if (!node || !out) invalid("query_capability: NULL argument");
    const vk::Answer a = vk::answer_node(*node, device_at(plugin, device).info());
    ampx_capability cap{};
    cap.support = a.support;
    cap.cost_us = -1;
    ps::copy_cstr(cap.note, a.note);
    ps::write_out_struct(out, cap);
  });
}

ampx_status* buffer_alloc(ampx_plugin* plugin, int32_t device, uint64_t bytes, ampx_buffer** out) {
  return guard([&] {
    if (!out) invalid("buffer_alloc: NULL argument");
    *out = nullptr;
    vk::Device& d = device_at(plugin, device);
    auto b = std::make_unique<ampx_buffer>();
    b->device = &d;
    try {
      b->alloc = d.pool().device(bytes);
    } catch (const StatusError& e) {
      throw StatusError(e.code(), "buffer_alloc on " + d.label() + ": " + e.what());
    }
    b->size = bytes;
    b->id = d.next_buffer_id();
    *out = b.release();
  });
}

void buffer_free(ampx_buffer* buffer) {
  if (!buffer) return;
  try {
    // Recorded work may still use it; then it returns to the pool for reuse.
    if (buffer->device->stream().pending()) buffer->device->stream().flush();
    buffer->device->pool().release(std::move(buffer->alloc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ampx vulkan: buffer_free: %s\n", e.what());
  }
  delete buffer;
}

ampx_status* copy_to_device(ampx_buffer* dst, uint64_t dst_offset, const void* src,
                            uint64_t bytes) {
  return guard([&] {
    if (!dst || (!src && bytes)) invalid("copy_to_device: NULL argument");
    check_range("copy_to_device", dst->size, dst_offset, bytes);
    if (!bytes) return;
    vk::Device& d = *dst->device;
    if (dst->alloc.mapped()) {
      // Host write into memory recorded work may still read: run that first.
      if (d.stream().pending()) d.stream().flush();
      std::memcpy(dst->alloc.mapped() + dst_offset, src, bytes);
      return;
    }
    vk::Allocation s = d.pool().staging(bytes);
    std::memcpy(s.mapped(), src, bytes);
    record_copy(d, s.buffer(), 0, dst->alloc.buffer(), dst_offset, bytes, "copy_to_device");
    d.stream().keep(std::move(s));
  });
}

ampx_status* copy_to_host(void* dst, const ampx_buffer* src, uint64_t src_offset, uint64_t bytes) {
  return guard([&] {
    if (!src || (!dst && bytes)) invalid("copy_to_host: NULL argument");
    check_range("copy_to_host", src->size, src_offset, bytes);
    if (!bytes) return;
    vk::Device& d = *src->device;
    if (src->alloc.mapped()) {
      d.stream().flush();
      std::memcpy(dst, src->alloc.mapped() + src_offset, bytes);
      return;
    }
    vk::Allocation s = d.pool().staging(bytes);
    record_copy(d, src->alloc.buffer(), src_offset, s.buffer(), 0, bytes, "copy_to_host");
    d.stream().flush();
    std::memcpy(dst, s.mapped(), bytes);
    d.pool().release(std::move(s));
  });
}

ampx_status* copy_device_to_device(ampx_buffer* dst, uint64_t dst_offset, const ampx_buffer* src,
                                   uint64_t src_offset, uint64_t bytes) {
  return guard([&]() -> ampx_status* {
    if (!dst || !src) invalid("copy_device_to_device: NULL argument");
    check_range("copy_device_to_device (destination)", dst->size, dst_offset, bytes);
    check_range("copy_device_to_device (source)", src->size, src_offset, bytes);
    if (!bytes) return nullptr;
    if (dst->device == src->device) {
      record_copy(*dst->device, src->alloc.buffer(), src_offset, dst->alloc.buffer(), dst_offset,
                  bytes, "copy_device_to_device");
      return nullptr;
    }
    // Between two Vulkan devices: through the host.
    std::vector<unsigned char> tmp(bytes);
    if (ampx_status* s = copy_to_host(tmp.data(), src, src_offset, bytes)) return s;
    return copy_to_device(dst, dst_offset, tmp.data(), bytes);
  });
}

ampx_status* kernel_prepare(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                            ampx_kernel** out) {
  return guard([&] {
    if (!node || !out) invalid("kernel_prepare: NULL argument");
    *out = nullptr;
    vk::Device& d = device_at(plugin, device);
    vk::OpPlan plan = vk::plan_for_prepare(*node, d.info());
    const ps::NodeView v(*node);
    auto k = std::make_unique<ampx_kernel>();
    try {
      k->kernel = std::make_unique<vk::Kernel>(d, v, std::move(plan));
    } catch (const StatusError& e) {
      throw StatusError(e.code(), v.where() + ": " + e.what());
    }
    *out = k.release();
  });
}

// kernel_launch, and kernel_launch_timed when `device_us` is given.
ampx_status* launch(ampx_kernel* kernel, const ampx_buffer_view* inputs, size_t num_inputs,
                    const ampx_buffer_view* outputs, size_t num_outputs, double* device_us) {
  return guard([&] {
    if (!kernel) invalid("kernel_launch: NULL kernel");
    vk::Kernel& k = *kernel->kernel;
    if (num_inputs != k.num_inputs() || num_outputs != k.num_outputs())
      invalid(k.where() + ": launched with " + std::to_string(num_inputs) + " inputs and " +
              std::to_string(num_outputs) + " outputs, prepared for " +
              std::to_string(k.num_inputs()) + " and " + std::to_string(k.num_outputs()));
    if ((num_inputs && !inputs) || (num_outputs && !outputs)) invalid(k.where() + ": NULL views");
    auto resolve = [&](const ampx_buffer_view* views, size_t i, uint64_t bytes, const char* what) {
      const auto* view = reinterpret_cast<const ampx_buffer_view*>(
          reinterpret_cast<const char*>(views) + i * views[0].struct_size);
      if (!AMPX_HAS_MEMBER(*view, ampx_buffer_view, offset))
        invalid(k.where() + ": view struct_size too small");
      const ampx_buffer* b = view->buffer;
      if (!b) invalid(k.where() + ": " + what + " " + std::to_string(i) + " has no buffer");
      if (b->device != &k.device())
        invalid(k.where() + ": " + what + " " + std::to_string(i) + " lives on another device");
      check_range((k.where() + " " + what + " " + std::to_string(i)).c_str(), b->size, view->offset,
                  bytes);
      return vk::BufferRef{b->alloc.buffer(), b->id, b->alloc.capacity(), view->offset};
    };
    kernel->ins.resize(num_inputs);
    kernel->outs.resize(num_outputs);
    for (size_t i = 0; i < num_inputs; ++i)
      kernel->ins[i] = resolve(inputs, i, k.input_bytes(i), "input");
    for (size_t i = 0; i < num_outputs; ++i)
      kernel->outs[i] = resolve(outputs, i, k.output_bytes(i), "output");
    if (!device_us) {
      k.launch(kernel->ins, kernel->outs);
      return;
    }
    const vk::PhysicalDevice& info = k.device().info();
    if (info.timestamp_bits == 0)
      throw StatusError(AMPX_STATUS_UNSUPPORTED,
                        k.where() + ": " + info.name + " has no timestamps on its compute queue");
    *device_us = k.device().stream().timed(k.where(), info.timestamp_bits, info.timestamp_period_ns,
                                           [&] { k.launch(kernel->ins, kernel->outs); });
  });
}

ampx_status* kernel_launch(ampx_kernel* kernel, const ampx_buffer_view* inputs, size_t num_inputs,
                           const ampx_buffer_view* outputs, size_t num_outputs) {
  return launch(kernel, inputs, num_inputs, outputs, num_outputs, nullptr);
}

// Timestamp queries around the dispatches (the stream's flush waits).
ampx_status* kernel_launch_timed(ampx_kernel* kernel, const ampx_buffer_view* inputs,
                                 size_t num_inputs, const ampx_buffer_view* outputs,
                                 size_t num_outputs, double* out_device_us) {
  if (!out_device_us)
    return ps::make_status(AMPX_STATUS_INVALID_ARGUMENT, "kernel_launch_timed: NULL out");
  return launch(kernel, inputs, num_inputs, outputs, num_outputs, out_device_us);
}

void kernel_destroy(ampx_kernel* kernel) {
  delete kernel;
}

ampx_status* synchronize(ampx_plugin* plugin, int32_t device) {
  return guard([&] {
    vk::Device& d = device_at(plugin, device);
    try {
      d.stream().flush();
    } catch (const StatusError& e) {
      throw StatusError(e.code(), "synchronize(" + d.label() + "): " + e.what());
    }
  });
}

ampx_plugin_api make_api() {
  ampx_plugin_api api{};
  api.struct_size = sizeof api;
  api.abi_major = AMPX_ABI_VERSION_MAJOR;
  api.abi_minor = AMPX_ABI_VERSION_MINOR;
  api.plugin_name = "vulkan";
  api.plugin_version = kPluginVersion;
  api.status_code = status_code;
  api.status_message = status_message;
  api.status_destroy = status_destroy;
  api.plugin_create = plugin_create;
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
  // buffer_host_ptr stays NULL: launches run deferred, so a host pointer
  // would let the host read results before synchronize.
  api.kernel_launch_timed = kernel_launch_timed;
  return api;
}

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  static const ampx_plugin_api api = make_api();
  return &api;
}
