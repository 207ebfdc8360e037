#include <ampx/plugins/buffer.hpp>

#include <ampx/plugins/loaded_plugin.hpp>

#include <stdexcept>
#include <utility>

namespace ampx::plugins {

Buffer::Buffer(std::shared_ptr<const LoadedPlugin> plugin, ampx_buffer* handle, uint64_t size,
               int32_t device, void* host_ptr) noexcept
    : plugin_(std::move(plugin)),
      handle_(handle),
      size_(size),
      device_(device),
      host_ptr_(host_ptr) {}

Buffer::Buffer(Buffer&& other) noexcept
    : plugin_(std::move(other.plugin_)),
      handle_(std::exchange(other.handle_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      device_(std::exchange(other.device_, -1)),
      host_ptr_(std::exchange(other.host_ptr_, nullptr)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    plugin_ = std::move(other.plugin_);
    handle_ = std::exchange(other.handle_, nullptr);
    size_ = std::exchange(other.size_, 0);
    device_ = std::exchange(other.device_, -1);
    host_ptr_ = std::exchange(other.host_ptr_, nullptr);
  }
  return *this;
}

void Buffer::reset() noexcept {
  if (handle_ != nullptr) plugin_->api().buffer_free(handle_);
  handle_ = nullptr;
  size_ = 0;
  device_ = -1;
  host_ptr_ = nullptr;
  // Last: this may unload the plugin.
  plugin_.reset();
}

ampx_buffer_view Buffer::view(uint64_t offset) const {
  if (handle_ == nullptr) throw std::logic_error("view of an empty Buffer");
  if (offset > size_) {
    throw std::out_of_range("buffer view offset " + std::to_string(offset) +
                            " is past the end of a buffer of " + std::to_string(size_) + " bytes");
  }
  ampx_buffer_view view{};
  view.struct_size = sizeof(view);
  view.buffer = handle_;
  view.offset = offset;
  return view;
}

}  // namespace ampx::plugins
