#include "physical_device.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "vk_error.hpp"

namespace ampx::vulkan {
namespace {

// Measured on lavapipe (Mesa 24/25): a ReduceSum whose invocation makes 3
// loop passes per element stops after 21,845 elements, 4 passes: 16,384, 5
// passes: 13,107: 65,535 passes in all (LP_MAX_TGSI_LOOP_ITERATIONS), each
// loop's exiting pass counted too. The plans count their data-dependent
// loops; the margin covers the fixed ones (rank loops, shared-memory trees).
constexpr uint64_t kLlvmpipeLoopPasses = 65535;
constexpr uint64_t kLlvmpipeLoopBudget = 60000;
static_assert(kLlvmpipeLoopBudget < kLlvmpipeLoopPasses);

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x1010:
      return "Imagination";
    case 0x10005:
      return "Mesa";
    default: {
      std::ostringstream s;
      s << "0x" << std::hex << id;
      return s.str();
    }
  }
}

std::string token(const std::string& s) {
  std::string r;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
    if (ok)
      r += ch;
    else if (r.empty() || r.back() != '_')
      r += '_';
  }
  while (!r.empty() && r.back() == '_') r.pop_back();
  return r.empty() ? "unknown" : r;
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  return std::any_of(exts.begin(), exts.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

// AMPX_VULKAN_MASK_FEATURES: comma-separated feature names to hide.
std::vector<std::string> masked_features() {
  std::vector<std::string> out;
  const char* env = std::getenv("AMPX_VULKAN_MASK_FEATURES");
  std::string s = env ? env : "";
  size_t pos = 0;
  while (pos <= s.size() && !s.empty()) {
    const size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

PhysicalDevice describe(VkPhysicalDevice pd, uint32_t family,
                        const std::vector<std::string>& mask) {
  PhysicalDevice d;
  d.handle = pd;
  d.queue_family = family;

  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());

  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(pd, &base);
  const bool v12 = base.apiVersion >= VK_API_VERSION_1_2;

  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  const bool have_driver = v12 || has_extension(exts, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (have_driver) subgroup.pNext = &driver;
  vkGetPhysicalDeviceProperties2(pd, &props);

  VkPhysicalDeviceShaderFloat16Int8Features f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice16BitStorageFeatures s16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats.pNext = &s16;
  const bool have_f16_query = v12 || has_extension(exts, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  const bool have_8bit_query = v12 || has_extension(exts, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  void** tail = &s16.pNext;
  if (have_f16_query) {
    *tail = &f16;
    tail = &f16.pNext;
  }
  if (have_8bit_query) *tail = &s8;
  vkGetPhysicalDeviceFeatures2(pd, &feats);

  d.api_version = base.apiVersion;
  d.name = base.deviceName;
  d.vendor_id = base.vendorID;
  d.device_id = base.deviceID;
  d.vendor = vendor_name(base.vendorID);
  d.driver_version = base.driverVersion;
  d.type = base.deviceType;
  if (have_driver) {
    d.driver_name = driver.driverName;
    d.driver_info = driver.driverInfo;
    d.driver_id = static_cast<uint32_t>(driver.driverID);
    if (driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) d.loop_budget = kLlvmpipeLoopBudget;
  } else {
    d.driver_name = "driver";
    d.driver_info = std::to_string(base.driverVersion);
  }
  d.subgroup_size = subgroup.subgroupSize;
  const auto& lim = base.limits;
  for (int i = 0; i < 3; ++i) d.max_groups[i] = lim.maxComputeWorkGroupCount[i];
  if (const char* cap = std::getenv("AMPX_VULKAN_MAX_WORKGROUPS")) {
    const long c = std::strtol(cap, nullptr, 10);
    if (c >= 1)
      for (auto& g : d.max_groups) g = std::min<uint32_t>(g, static_cast<uint32_t>(c));
  }
  if (const char* b = std::getenv("AMPX_VULKAN_LOOP_BUDGET")) {
    const long long n = std::strtoll(b, nullptr, 10);
    if (n >= 1) {
      d.loop_budget = static_cast<uint64_t>(n);
      d.loop_budget_forced = true;
    }
  }
  d.max_storage_range = lim.maxStorageBufferRange;
  d.blocked_gemm = d.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  if (const char* k = std::getenv("AMPX_VULKAN_GEMM_KERNEL")) {
    if (std::strcmp(k, "blocked") == 0) d.blocked_gemm = true;
    if (std::strcmp(k, "tiled") == 0) d.blocked_gemm = false;
  }
  d.storage_align = std::max<uint64_t>(1, lim.minStorageBufferOffsetAlignment);

  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    d.heaps.push_back(mem.memoryHeaps[i]);
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      d.device_local_bytes += mem.memoryHeaps[i].size;
  }

  auto is_masked = [&](const char* f) {
    if (std::find(mask.begin(), mask.end(), f) == mask.end()) return false;
    d.masked.emplace_back(f);
    return true;
  };
  d.storage16 = s16.storageBuffer16BitAccess == VK_TRUE && !is_masked("storageBuffer16BitAccess");
  d.float16 = have_f16_query && f16.shaderFloat16 == VK_TRUE && !is_masked("shaderFloat16");
  d.need_float16_ext = d.float16 && !v12;
  d.storage8 = have_8bit_query && s8.storageBuffer8BitAccess == VK_TRUE &&
               !is_masked("storageBuffer8BitAccess");
  d.need_8bit_ext = d.storage8 && !v12;
  d.coop_matrix =
      has_extension(exts, "VK_KHR_cooperative_matrix") && !is_masked("cooperativeMatrix");
  d.bf16_ext = has_extension(exts, "VK_KHR_shader_bfloat16");
  d.float64 = feats.features.shaderFloat64 == VK_TRUE && !is_masked("shaderFloat64");
  return d;
}

}  // namespace

std::string PhysicalDevice::api_string() const {
  return std::to_string(VK_API_VERSION_MAJOR(api_version)) + "." +
         std::to_string(VK_API_VERSION_MINOR(api_version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(api_version));
}

std::string PhysicalDevice::features_string() const {
  std::string s = std::string("shaderFloat16 ") + (float16 ? "yes" : "no") +
                  ", storageBuffer16BitAccess " + (storage16 ? "yes" : "no") +
                  ", storageBuffer8BitAccess " + (storage8 ? "yes" : "no") +
                  ", cooperative_matrix " + (coop_matrix ? "yes" : "no") + ", shaderFloat64 " +
                  (float64 ? "yes" : "no") + ", loops " +
                  (loop_budget ? std::to_string(loop_budget) : "unbounded");
  if (loop_budget_forced) s += " (forced)";
  if (!masked.empty()) {
    s += " (masked:";
    for (const auto& m : masked) s += " " + m;
    s += ")";
  }
  return s;
}

std::string PhysicalDevice::fingerprint(const char* plugin_version) const {
  std::ostringstream id;
  id << std::hex << vendor_id << ":" << device_id;
  std::string fp = std::string("vulkan/") + plugin_version + "/" + id.str() + "/" + token(name) +
                   "/" + token(driver_name) + "/" + token(driver_info);
  for (const auto& m : masked) fp += "/mask-" + m;
  if (loop_budget_forced) fp += "/loops-" + std::to_string(loop_budget);
  return fp;
}

std::vector<PhysicalDevice> enumerate_devices(VkInstance instance, std::string* skipped) {
  uint32_t n = 0;
  vk_check(vkEnumeratePhysicalDevices(instance, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> pds(n);
  vk_check(vkEnumeratePhysicalDevices(instance, &n, pds.data()), "vkEnumeratePhysicalDevices");
  const auto mask = masked_features();
  std::vector<PhysicalDevice> out;
  for (VkPhysicalDevice pd : pds) {
    VkPhysicalDeviceProperties p{};
    vkGetPhysicalDeviceProperties(pd, &p);
    if (p.apiVersion < VK_API_VERSION_1_1) {
      if (skipped) *skipped += std::string(p.deviceName) + ": Vulkan 1.0 only; ";
      continue;
    }
    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nf);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fams.data());
    int family = -1;
    for (uint32_t i = 0; i < nf && family < 0; ++i)
      if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = static_cast<int>(i);
    if (family < 0) {
      if (skipped) *skipped += std::string(p.deviceName) + ": no compute queue; ";
      continue;
    }
    out.push_back(describe(pd, static_cast<uint32_t>(family), mask));
    out.back().timestamp_bits = fams[static_cast<size_t>(family)].timestampValidBits;
    out.back().timestamp_period_ns = p.limits.timestampPeriod;
  }
  return out;
}

}  // namespace ampx::vulkan
