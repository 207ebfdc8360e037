#include "instance.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "vk_error.hpp"

namespace ampx::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool layer_available(const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool instance_extension_available(const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data()) != VK_SUCCESS) return false;
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT type,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data,
                                          void* user) {
  auto* state = static_cast<Instance::MessengerState*>(user);
  // Only the layer's findings count; the loader reports its own problems
  // (a missing ICD file, say) as GENERAL messages: logged, not counted.
  const bool validation = (type & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT) != 0;
  if ((severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) && !validation) {
    std::fprintf(stderr, "ampx vulkan loader: %s\n",
                 data && data->pMessage ? data->pMessage : "(no message)");
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    state->errors.fetch_add(1);
    std::fprintf(stderr, "ampx vulkan validation error: %s\n",
                 data && data->pMessage ? data->pMessage : "(no message)");
    if (state->abort_on_error) std::abort();
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    std::fprintf(stderr, "ampx vulkan validation warning: %s\n",
                 data && data->pMessage ? data->pMessage : "(no message)");
  }
  return VK_FALSE;  // never abort the Vulkan call itself
}

}  // namespace

Instance::Instance() {
  const char* env = std::getenv("AMPX_VULKAN_VALIDATION");
  const std::string_view mode = env ? env : "";
  const bool want_validation = !mode.empty() && mode != "0";
  state_->abort_on_error = mode == "abort";

  uint32_t loader_api = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_api) != VK_SUCCESS) loader_api = VK_API_VERSION_1_0;
  if (loader_api < VK_API_VERSION_1_1) {
    reason_ = "Vulkan loader is 1.0 only (ampx needs 1.1)";
    return;
  }
  api_ = loader_api >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;

  std::vector<const char*> layers, extensions;
  if (want_validation) {
    if (!layer_available(kValidationLayer)) {
      validation_problem_ =
          "AMPX_VULKAN_VALIDATION set but VK_LAYER_KHRONOS_validation is not "
          "installed (vulkan-validationlayers)";
    } else if (!instance_extension_available(VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
      validation_problem_ = "AMPX_VULKAN_VALIDATION set but VK_EXT_debug_utils is missing";
    } else {
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      validation_ = true;
    }
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "ampx";
  app.pEngineName = "ampx";
  app.apiVersion = api_;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  mi.messageType =
      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  mi.pfnUserCallback = on_message;
  mi.pUserData = state_.get();
  if (validation_) ci.pNext = &mi;  // also covers vkCreate/DestroyInstance themselves

  VkInstance inst = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&ci, nullptr, &inst);
  if (r != VK_SUCCESS) {
    reason_ = std::string("no usable Vulkan driver (vkCreateInstance: ") + vk_result_name(r) + ")";
    validation_ = false;
    return;
  }
  instance_ = Handle<VkInstance>(inst, [](VkInstance i) { vkDestroyInstance(i, nullptr); });
#if defined(__SANITIZE_ADDRESS__)
  // Sanitizer builds only: Mesa's lavapipe keeps a few allocations per
  // instance until exit, and the loader unloads it at vkDestroyInstance, so
  // LeakSanitizer could only say "unknown module" and no suppression
  // (tests/lsan_suppressions.txt names Mesa's libraries) could match.
  // Keeping the already loaded driver mapped lets it name them.
  for (const char* lib :
       {"libvulkan_lvp.so", "libLLVM-15.so.1", "libVkLayer_khronos_validation.so"})
    dlopen(lib, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#endif

  if (validation_) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(inst, "vkCreateDebugUtilsMessengerEXT"));
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(inst, "vkDestroyDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerEXT m = VK_NULL_HANDLE;
    if (create && destroy && create(inst, &mi, nullptr, &m) == VK_SUCCESS) {
      messenger_ = Handle<VkDebugUtilsMessengerEXT>(
          m, [inst, destroy](VkDebugUtilsMessengerEXT h) { destroy(inst, h, nullptr); });
    } else {
      validation_problem_ = "validation layer on, but the debug messenger could not be created";
    }
  }
}

Instance::~Instance() {
  messenger_.reset();
  instance_.reset();
  if (validation_ && state_->errors.load() > 0)
    std::fprintf(stderr, "ampx vulkan: %d validation error(s) in this plugin instance\n",
                 state_->errors.load());
}

std::string Instance::validation_note() const {
  if (!validation_problem_.empty()) return validation_problem_;
  if (!validation_) return {};
  return "Khronos validation on, " + std::to_string(state_->errors.load()) + " errors";
}

}  // namespace ampx::vulkan
