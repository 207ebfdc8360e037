// What the plugin knows about one Vulkan physical device: identity for
// device_props and the fingerprint, the limits kernels are planned against,
// and the 16-bit features capability answers are derived from, after the
// AMPX_VULKAN_MASK_FEATURES switch (which hides features to test the
// emulated path; a masked feature is also not enabled on the VkDevice, so the
// validation layer catches a kernel that uses it anyway).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ampx::vulkan {

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  uint32_t queue_family = 0;  // first family with VK_QUEUE_COMPUTE_BIT
  uint32_t api_version = 0;
  std::string name, vendor, driver_name, driver_info;
  uint32_t vendor_id = 0, device_id = 0, driver_version = 0;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  std::vector<VkMemoryHeap> heaps;
  uint64_t device_local_bytes = 0;
  uint32_t subgroup_size = 0;
  std::array<uint32_t, 3> max_groups{};  // maxComputeWorkGroupCount (capped by
                                         // AMPX_VULKAN_MAX_WORKGROUPS for tests)
  uint64_t max_storage_range = 0;
  uint64_t storage_align = 1;  // minStorageBufferOffsetAlignment
  // GEMM/conv kernel family: register-blocked without shared memory on CPU
  // drivers (lavapipe), tiled through shared memory on GPUs; overridden by
  // AMPX_VULKAN_GEMM_KERNEL=blocked|tiled (tests run both on one device).
  bool blocked_gemm = false;
  // Device-side timing (kernel_launch_timed): timestamps on the compute
  // queue, and nanoseconds per tick; 0 bits: not supported.
  uint32_t timestamp_bits = 0;
  float timestamp_period_ns = 0;
  // VkDriverId (0: the driver does not say).
  uint32_t driver_id = 0;
  // How many loop passes one invocation may make before the driver ends its
  // loops silently (0: no limit). llvmpipe (lavapipe) counts every pass of
  // every loop of the shader, the exiting one included, against
  // LP_MAX_TGSI_LOOP_ITERATIONS = 65,535 per SIMD batch of invocations; the
  // budget keeps a margin below that for the small fixed loops the plans'
  // estimates leave out (Dispatch::loop_iterations). AMPX_VULKAN_LOOP_BUDGET=N
  // forces N on any driver (tests of the refusal path), and the fingerprint
  // then gets /loops-N.
  uint64_t loop_budget = 0;
  bool loop_budget_forced = false;

  // Features as answered (after masking) ...
  bool float16 = false;             // shaderFloat16
  bool storage16 = false;           // storageBuffer16BitAccess
  bool storage8 = false;            // storageBuffer8BitAccess (bool, i8, u8 tensors)
  bool coop_matrix = false;         // VK_KHR_cooperative_matrix
  bool float64 = false;             // shaderFloat64 (Attention's softmax_f64, Det's f64 LU)
  bool bf16_ext = false;            // VK_KHR_shader_bfloat16
  bool need_float16_ext = false;    // VK_KHR_shader_float16_int8 (API < 1.2)
  bool need_8bit_ext = false;       // VK_KHR_8bit_storage (API < 1.2)
  std::vector<std::string> masked;  // feature names hidden by the switch

  std::string api_string() const;
  // "shaderFloat16 yes, storageBuffer16BitAccess yes, ..., loops 60000"
  // (the loop budget; "unbounded": none) for notes.
  std::string features_string() const;
  // "vulkan/<plugin ver>/<vendor:device>/<name>/<driver>/<driver info>[/mask-...]"
  std::string fingerprint(const char* plugin_version) const;
};

// Every physical device with a compute queue and Vulkan 1.1, in the loader's
// order. `skipped` gets a reason for each device left out.
std::vector<PhysicalDevice> enumerate_devices(VkInstance instance, std::string* skipped);

}  // namespace ampx::vulkan
