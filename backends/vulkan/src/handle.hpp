// RAII for Vulkan handles: Handle<VkX> owns one handle and destroys it with
// the function given at construction (bound to its VkDevice/VkInstance).
// Move-only; destruction order is the owner's member order.
#pragma once

#include <vulkan/vulkan.h>

#include <functional>
#include <utility>

namespace ampx::vulkan {

template <class T>
class Handle {
 public:
  Handle() = default;
  Handle(T h, std::function<void(T)> destroy) : h_(h), destroy_(std::move(destroy)) {}
  Handle(Handle&& o) noexcept
      : h_(std::exchange(o.h_, static_cast<T>(VK_NULL_HANDLE))), destroy_(std::move(o.destroy_)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, static_cast<T>(VK_NULL_HANDLE));
      destroy_ = std::move(o.destroy_);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  void reset() noexcept {
    if (h_ != static_cast<T>(VK_NULL_HANDLE) && destroy_) destroy_(h_);
    h_ = static_cast<T>(VK_NULL_HANDLE);
  }
  T get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != static_cast<T>(VK_NULL_HANDLE); }

 private:
  T h_ = static_cast<T>(VK_NULL_HANDLE);
  std::function<void(T)> destroy_;
};

}  // namespace ampx::vulkan
