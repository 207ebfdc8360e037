// The VkInstance of one plugin instance, with the Khronos validation layer
// and a debug-utils messenger when AMPX_VULKAN_VALIDATION is set:
//   AMPX_VULKAN_VALIDATION=1      enable the layer; every validation error is
//                                 logged to stderr and counted (plugin_info
//                                 shows the count)
//   AMPX_VULKAN_VALIDATION=abort  the same, and abort() on the first error,
//                                 so a test run cannot pass with one.
// Creation failing (no ICD, incompatible driver) is not an error: the plugin
// then has zero devices and reason() says why.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <string>

#include "handle.hpp"

namespace ampx::vulkan {

class Instance {
 public:
  Instance();
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance get() const noexcept { return instance_.get(); }
  bool ok() const noexcept { return static_cast<bool>(instance_); }
  const std::string& reason() const noexcept { return reason_; }
  uint32_t api_version() const noexcept { return api_; }

  bool validation_on() const noexcept { return validation_; }
  // "validation: 0 errors" / "validation requested but ... not installed" / "".
  std::string validation_note() const;
  int validation_errors() const noexcept { return state_->errors.load(); }

  struct MessengerState {
    std::atomic<int> errors{0};
    bool abort_on_error = false;
  };

 private:
  Handle<VkInstance> instance_;
  Handle<VkDebugUtilsMessengerEXT> messenger_;
  std::unique_ptr<MessengerState> state_ = std::make_unique<MessengerState>();
  std::string reason_;
  std::string validation_problem_;
  bool validation_ = false;
  uint32_t api_ = VK_API_VERSION_1_1;
};

}  // namespace ampx::vulkan
