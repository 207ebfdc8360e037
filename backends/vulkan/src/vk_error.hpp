// VkResult -> ampx status: every failing Vulkan call throws a StatusError
// whose code says what the host can do about it (OOM, device lost, ...).
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <string_view>

#include "ampx/plugin_support.hpp"

namespace ampx::vulkan {

using plugin_support::StatusError;

const char* vk_result_name(VkResult r) noexcept;
// AMPX_STATUS_OUT_OF_MEMORY for the OOM results, UNAVAILABLE for a lost
// device or missing driver, INTERNAL otherwise.
ampx_status_code status_for(VkResult r) noexcept;
// Throws StatusError("<what>: <VK_ERROR_...>") unless r is VK_SUCCESS.
void vk_check(VkResult r, std::string_view what);

// Thrown by plan builders for a node the plugin has no kernel for: answered
// `unsupported` with the message as note.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ampx::vulkan
