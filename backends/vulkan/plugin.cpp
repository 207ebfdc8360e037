// The Vulkan compute backend plugin (devices vulkan:0, ...): the SDK's glue
// (ampx/plugin_glue.hpp) over src/. Launches are recorded into the device's
// command buffer and submitted at synchronize / copy_to_host (src/stream.hpp).
// Options: "threads=N" is accepted and ignored (the host passes it to every
// plugin); other keys are ignored.
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/plugin_glue.hpp"
#include "capability.hpp"
#include "device.hpp"
#include "instance.hpp"
#include "kernel.hpp"

namespace ps = ampx::plugin_support;
namespace vk = ampx::vulkan;
using ps::StatusError;

namespace {

// Device-side copy between two buffers of one device, recorded in order.
void record_copy(vk::Device& d, VkBuffer src, uint64_t so, VkBuffer dst, uint64_t doff,
                 uint64_t bytes, const std::string& what) {
  VkCommandBuffer cmd = d.stream().record(what);
  VkBufferCopy region{so, doff, bytes};
  vkCmdCopyBuffer(cmd, src, dst, 1, &region);
}

// The glue's Impl (ampx/plugin_glue.hpp): devices, buffers and kernels.
class VulkanPlugin {
 public:
  static constexpr const char* kName = "vulkan";
  static constexpr const char* kVersion = "0.1.0";
  // threads: validated, not used (a GPU API); the host sends it to every plugin.
  // replicas: each physical device N times, as independent logical devices
  // (own queue, memory and command stream), so that multi-device placement
  // and cross-device copies can be tested on a machine with one GPU.
  static constexpr std::array<ps::OptionSpec, 2> kOptions{
      {{"threads", "0..4096", "accepted and ignored (kernels run on the GPU)"},
       {"replicas", "1..8",
        "expose each physical device N times as independent devices (testing multi-device "
        "plans on one GPU); default 1"}}};

  struct Buffer {
    vk::Device* device = nullptr;
    vk::Allocation alloc;
    uint64_t id = 0;
  };
  using View = ps::View<Buffer>;

  class Kernel {
   public:
    explicit Kernel(std::unique_ptr<vk::Kernel> k) : k_(std::move(k)) {}
    void launch(std::span<const View> ins, std::span<const View> outs) {
      bind(ins, outs);
      k_->launch(ins_, outs_);
    }
    // Timestamp queries around the dispatches (the stream's flush waits).
    double launch_timed(std::span<const View> ins, std::span<const View> outs) {
      const vk::PhysicalDevice& info = k_->device().info();
      if (info.timestamp_bits == 0)
        throw StatusError(AMPX_STATUS_UNSUPPORTED,
                          info.name + " has no timestamps on its compute queue");
      bind(ins, outs);
      return k_->device().stream().timed(k_->where(), info.timestamp_bits, info.timestamp_period_ns,
                                         [&] { k_->launch(ins_, outs_); });
    }

   private:
    void bind(std::span<const View> ins, std::span<const View> outs) {
      const auto ref = [](const View& v) {
        return vk::BufferRef{v.buffer->alloc.buffer(), v.buffer->id, v.buffer->alloc.capacity(),
                             v.offset};
      };
      ins_.clear();
      outs_.clear();
      for (const View& v : ins) ins_.push_back(ref(v));
      for (const View& v : outs) outs_.push_back(ref(v));
    }
    std::unique_ptr<vk::Kernel> k_;
    std::vector<vk::BufferRef> ins_, outs_;  // per-launch scratch
  };

  explicit VulkanPlugin(const ps::PluginOptions& options) {
    options.integer("threads", 0, 0, 4096);
    const long replicas = options.integer("replicas", 1, 1, 8);
    instance_ = std::make_unique<vk::Instance>();
    const uint32_t api = instance_->api_version();
    library_ = "Vulkan " + std::to_string(VK_API_VERSION_MAJOR(api)) + "." +
               std::to_string(VK_API_VERSION_MINOR(api)) + " (loader)";
    if (!instance_->ok()) {
      note_ = instance_->reason();
      return;
    }
    std::string skipped;
    std::vector<vk::PhysicalDevice> pds;
    try {
      pds = vk::enumerate_devices(instance_->get(), &skipped);
    } catch (const StatusError& e) {
      note_ = std::string("no Vulkan devices: ") + e.what();
    }
    for (auto& pd : pds) {
      for (long r = 0; r < replicas; ++r) {
        const int32_t index = static_cast<int32_t>(devices_.size());
        try {
          devices_.push_back(std::make_unique<vk::Device>(pd, index));
        } catch (const StatusError& e) {
          skipped += pd.name + ": " + e.what() + "; ";
          break;
        }
      }
    }
    std::string note;
    if (devices_.empty()) {
      note = "no Vulkan device with a compute queue";
      if (!skipped.empty()) note += " (" + skipped + ")";
    } else {
      const vk::PhysicalDevice& d0 = devices_[0]->info();
      note = std::to_string(devices_.size()) + " device(s); vulkan:0 API " + d0.api_string() +
             ", subgroup " + std::to_string(d0.subgroup_size) + ", " + d0.features_string();
      if (replicas > 1) note += "; replicas=" + std::to_string(replicas);
      if (!skipped.empty()) note += "; skipped: " + skipped;
    }
    // First: the note has 256 bytes, and the device facts may fill them.
    const std::string val = instance_->validation_note();
    if (!val.empty()) note = val + "; " + note;
    if (note_.empty()) note_ = note;
  }

  ~VulkanPlugin() {
    devices_.clear();  // before the instance
    instance_.reset();
  }

  std::string note() const {
    std::string note = note_;
    // The validation count changes as the plugin runs: report the current one.
    if (instance_ && instance_->validation_on()) {
      const size_t at = note.find("Khronos validation on");
      if (at != std::string::npos) {
        const size_t end = note.find("; ", at);
        note.replace(at, end == std::string::npos ? std::string::npos : end - at,
                     instance_->validation_note());
      }
    }
    return note;
  }
  std::string library() const { return library_; }
  int32_t device_count() const { return static_cast<int32_t>(devices_.size()); }

  ampx_device_props device_props(int32_t device) const {
    const vk::PhysicalDevice& d = devices_[static_cast<size_t>(device)]->info();
    ampx_device_props p{};
    ps::copy_cstr(p.name, d.name);
    ps::copy_cstr(p.vendor, d.vendor);
    ps::copy_cstr(p.driver_version,
                  d.driver_name + " " + d.driver_info + ", Vulkan " + d.api_string());
    ps::copy_cstr(p.fingerprint, d.fingerprint(kVersion));
    p.memory_bytes = d.device_local_bytes;
    p.type = d.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? AMPX_DEVICE_CPU
             : (d.type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                d.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                d.type == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU)
                 ? AMPX_DEVICE_GPU
                 : AMPX_DEVICE_OTHER;
    p.compute_units = 0;  // Vulkan does not say
    return p;
  }

  ps::Capability capability(int32_t device, const ps::NodeView& v) const {
    const vk::Answer a = vk::answer_node(v.desc(), dev(device).info());
    return {a.support, -1, a.note};
  }

  Buffer alloc(int32_t device, uint64_t bytes) {
    vk::Device& d = dev(device);
    Buffer b;
    b.device = &d;
    try {
      b.alloc = d.pool().device(bytes);
    } catch (const StatusError& e) {
      throw StatusError(e.code(), "buffer_alloc on " + d.label() + ": " + e.what());
    }
    b.id = d.next_buffer_id();
    return b;
  }

  void release(Buffer& b) noexcept {
    try {
      // Recorded work may still use it; then it returns to the pool for reuse.
      if (b.device->stream().pending()) b.device->stream().flush();
      b.device->pool().release(std::move(b.alloc));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ampx vulkan: buffer_free: %s\n", e.what());
    }
  }

  // Copies follow "Ordering and completion" (backend_api.h): a host write
  // waits for recorded work that may read the bytes, copy_to_host flushes.
  void write(Buffer& dst, uint64_t offset, const void* src, uint64_t bytes) {
    vk::Device& d = *dst.device;
    if (dst.alloc.mapped()) {
      if (d.stream().pending()) d.stream().flush();
      std::memcpy(dst.alloc.mapped() + offset, src, bytes);
      return;
    }
    vk::Allocation s = d.pool().staging(bytes);
    std::memcpy(s.mapped(), src, bytes);
    record_copy(d, s.buffer(), 0, dst.alloc.buffer(), offset, bytes, "copy_to_device");
    d.stream().keep(std::move(s));
  }

  void read(void* dst, const Buffer& src, uint64_t offset, uint64_t bytes) {
    vk::Device& d = *src.device;
    if (src.alloc.mapped()) {
      d.stream().flush();
      std::memcpy(dst, src.alloc.mapped() + offset, bytes);
      return;
    }
    vk::Allocation s = d.pool().staging(bytes);
    record_copy(d, src.alloc.buffer(), offset, s.buffer(), 0, bytes, "copy_to_host");
    d.stream().flush();
    std::memcpy(dst, s.mapped(), bytes);
    d.pool().release(std::move(s));
  }

  void copy(ps::BufferRef<Buffer> dst, ps::BufferRef<Buffer> src, uint64_t bytes) {
    if (dst.buffer.device == src.buffer.device) {
      record_copy(*dst.buffer.device, src.buffer.alloc.buffer(), src.offset,
                  dst.buffer.alloc.buffer(), dst.offset, bytes, "copy_device_to_device");
      return;
    }
    // Between two Vulkan devices: through the host. read() flushes the
    // source's recorded work, so the copy has read the range when it returns.
    std::vector<unsigned char> tmp(bytes);
    read(tmp.data(), src.buffer, src.offset, bytes);
    write(dst.buffer, dst.offset, tmp.data(), bytes);
  }

  std::unique_ptr<Kernel> prepare(int32_t device, const ps::NodeView& v) {
    vk::Device& d = dev(device);
    vk::OpPlan plan = vk::plan_for_prepare(v.desc(), d.info());
    return std::make_unique<Kernel>(std::make_unique<vk::Kernel>(d, v, std::move(plan)));
  }

  void synchronize(int32_t device) {
    vk::Device& d = dev(device);
    try {
      d.stream().flush();
    } catch (const StatusError& e) {
      throw StatusError(e.code(), "synchronize(" + d.label() + "): " + e.what());
    }
  }
  // No host_ptr: launches run deferred, so a host pointer would let the host
  // read results before synchronize.

 private:
  vk::Device& dev(int32_t device) const { return *devices_[static_cast<size_t>(device)]; }

  std::unique_ptr<vk::Instance> instance_;
  std::vector<std::unique_ptr<vk::Device>> devices_;
  std::string note_, library_;
};

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return ps::plugin_entry<VulkanPlugin>();
}
