#include <ampx/plugins/device.hpp>

#include <ampx/plugins/loaded_plugin.hpp>
#include <ampx/plugins/status.hpp>

#include "struct_io.hpp"

#include <spdlog/fmt/fmt.h>

#include <stdexcept>
#include <utility>

namespace ampx::plugins {
namespace {

void check_node(const ampx_node_desc& node, const char* operation) {
  if (node.struct_size == 0) {
    throw std::invalid_argument(std::string(operation) + ": ampx_node_desc.struct_size is 0");
  }
  if (node.op_type == nullptr) {
    throw std::invalid_argument(std::string(operation) + ": ampx_node_desc.op_type is NULL");
  }
}

// The first dtype of the node that is newer than a plugin of ABI 1.`minor`,
// or AMPX_DTYPE_INVALID. backend_api.h: the host never asks such a plugin
// about it (the plugin may not know the value).
ampx_dtype newer_dtype(const ampx_node_desc& node, uint32_t minor) {
  const auto newer = [&](const ampx_tensor_desc* t, size_t n) {
    for (size_t i = 0; t != nullptr && i < n; ++i)
      if (static_cast<uint32_t>(AMPX_DTYPE_SINCE_MINOR(t[i].dtype)) > minor) return t[i].dtype;
    return AMPX_DTYPE_INVALID;
  };
  const ampx_dtype in = newer(node.inputs, node.num_inputs);
  return in != AMPX_DTYPE_INVALID ? in : newer(node.outputs, node.num_outputs);
}

std::string too_old(ampx_dtype dt, uint32_t minor) {
  return fmt::format("dtype {} is newer than the plugin's ABI 1.{} (since 1.{})",
                     static_cast<int>(dt), minor, AMPX_DTYPE_SINCE_MINOR(dt));
}

// "Relu 'conv1/relu'"
std::string describe(const ampx_node_desc& node) {
  return fmt::format("{} '{}'", node.op_type, node.name != nullptr ? node.name : "");
}

// Throws std::out_of_range unless [offset, offset + bytes) lies within size.
void check_range(const char* operation, const char* which, uint64_t offset, uint64_t bytes,
                 uint64_t size) {
  if (offset > size || bytes > size - offset) {
    throw std::out_of_range(
        fmt::format("{}: {} bytes at offset {} exceed the {} buffer of {} bytes", operation, bytes,
                    offset, which, size));
  }
}

}  // namespace

Device::Device(std::shared_ptr<const LoadedPlugin> plugin, int32_t index,
               const ampx_device_props& props)
    : plugin_(std::move(plugin)),
      id_(plugin_->name() + ":" + std::to_string(index)),
      index_(index),
      props_(props) {}

const std::string& Device::plugin_name() const noexcept {
  return plugin_->name();
}

void Device::check_own(const Buffer& buffer, const char* what) const {
  if (!buffer) throw std::invalid_argument(fmt::format("{}: empty Buffer", what));
  if (buffer.plugin_ != plugin_ || buffer.device_ != index_) {
    throw std::invalid_argument(fmt::format("{}: the buffer belongs to {}:{}, not to {}", what,
                                            buffer.plugin_->name(), buffer.device_, id_));
  }
}

Capability Device::query(const ampx_node_desc& node) const {
  check_node(node, "query_capability");
  if (const ampx_dtype dt = newer_dtype(node, plugin_->abi_minor()); dt != AMPX_DTYPE_INVALID) {
    Capability old;
    old.support = AMPX_SUPPORT_UNSUPPORTED;
    old.note = too_old(dt, plugin_->abi_minor());
    return old;
  }
  ampx_capability out{};
  out.struct_size = sizeof(out);
  out.support = AMPX_SUPPORT_UNSUPPORTED;
  out.cost_us = -1.0;
  const std::string operation =
      fmt::format("query_capability({}, device {})", describe(node), index_);
  plugin_->check(plugin_->guarded(operation,
                                  [&] {
                                    return plugin_->api().query_capability(plugin_->instance(),
                                                                           index_, &node, &out);
                                  }),
                 operation);

  const size_t size = detail::readable_size(out);
  Capability result;
  if (detail::has_member(out, size, &ampx_capability::support)) {
    switch (out.support) {
      case AMPX_SUPPORT_UNSUPPORTED:
      case AMPX_SUPPORT_NATIVE:
      case AMPX_SUPPORT_EMULATED:
        result.support = out.support;
        break;
      default:
        throw PluginError(plugin_->name(), operation, AMPX_STATUS_INTERNAL,
                          fmt::format("invalid support value {}", static_cast<int>(out.support)));
    }
  }
  if (detail::has_member(out, size, &ampx_capability::cost_us)) result.cost_us = out.cost_us;
  if (detail::has_member(out, size, &ampx_capability::note)) {
    detail::terminate(out.note);
    result.note = detail::fixed_string(out.note);
  }
  return result;
}

Buffer Device::allocate(uint64_t bytes) const {
  const auto& api = plugin_->api();
  const std::string operation = fmt::format("buffer_alloc({} bytes, device {})", bytes, index_);
  ampx_buffer* handle = nullptr;
  plugin_->check(api.buffer_alloc(plugin_->instance(), index_, bytes, &handle), operation);
  if (handle == nullptr) {
    throw PluginError(plugin_->name(), operation, AMPX_STATUS_INTERNAL,
                      "succeeded but returned no buffer");
  }
  // Owned from here on, so that a throw below frees it.
  Buffer buffer(plugin_, handle, bytes, index_, nullptr);
  if (api.buffer_host_ptr != nullptr) buffer.host_ptr_ = api.buffer_host_ptr(handle);
  return buffer;
}

void Device::copy_to_device(const Buffer& dst, uint64_t dst_offset,
                            std::span<const std::byte> src) const {
  check_own(dst, "copy_to_device");
  check_range("copy_to_device", "destination", dst_offset, src.size(), dst.size());
  if (src.empty()) return;
  plugin_->check_lazily(
      plugin_->api().copy_to_device(dst.handle(), dst_offset, src.data(), src.size()),
      [&] { return fmt::format("copy_to_device({} bytes, device {})", src.size(), index_); });
}

void Device::copy_to_host(std::span<std::byte> dst, const Buffer& src, uint64_t src_offset) const {
  check_own(src, "copy_to_host");
  check_range("copy_to_host", "source", src_offset, dst.size(), src.size());
  if (dst.empty()) return;
  plugin_->check_lazily(
      plugin_->api().copy_to_host(dst.data(), src.handle(), src_offset, dst.size()),
      [&] { return fmt::format("copy_to_host({} bytes, device {})", dst.size(), index_); });
}

void Device::copy_device_to_device(const Buffer& dst, uint64_t dst_offset, const Buffer& src,
                                   uint64_t src_offset, uint64_t bytes) const {
  constexpr const char* kOperation = "copy_device_to_device";
  if (!dst || !src) throw std::invalid_argument(fmt::format("{}: empty Buffer", kOperation));
  if (dst.plugin_ != plugin_ || src.plugin_ != plugin_) {
    throw std::invalid_argument(
        fmt::format("{}: both buffers must belong to plugin {}", kOperation, plugin_->name()));
  }
  check_range(kOperation, "destination", dst_offset, bytes, dst.size());
  check_range(kOperation, "source", src_offset, bytes, src.size());
  if (bytes == 0) return;
  plugin_->check_lazily(plugin_->api().copy_device_to_device(dst.handle(), dst_offset, src.handle(),
                                                             src_offset, bytes),
                        [&] {
                          return fmt::format("{}({} bytes, device {} to device {})", kOperation,
                                             bytes, src.device_index(), dst.device_index());
                        });
}

Kernel Device::prepare(const ampx_node_desc& node) const {
  check_node(node, "kernel_prepare");
  const std::string operation =
      fmt::format("kernel_prepare({}, device {})", describe(node), index_);
  if (const ampx_dtype dt = newer_dtype(node, plugin_->abi_minor()); dt != AMPX_DTYPE_INVALID)
    throw PluginError(plugin_->name(), operation, AMPX_STATUS_UNSUPPORTED,
                      too_old(dt, plugin_->abi_minor()));
  // Everything that can throw happens before the kernel exists.
  std::string op_type = node.op_type;
  std::string node_name = node.name != nullptr ? node.name : "";
  ampx_kernel* handle = nullptr;
  plugin_->check(plugin_->guarded(operation,
                                  [&] {
                                    return plugin_->api().kernel_prepare(plugin_->instance(),
                                                                         index_, &node, &handle);
                                  }),
                 operation);
  if (handle == nullptr) {
    throw PluginError(plugin_->name(), operation, AMPX_STATUS_INTERNAL,
                      "succeeded but returned no kernel");
  }
  return Kernel(plugin_, handle, index_, std::move(op_type), std::move(node_name), node.num_inputs,
                node.num_outputs);
}

void Device::synchronize() const {
  plugin_->check_lazily(plugin_->api().synchronize(plugin_->instance(), index_),
                        [&] { return fmt::format("synchronize(device {})", index_); });
}

std::string Device::plugin_note() const {
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  plugin_->check_lazily(plugin_->api().plugin_info(plugin_->instance(), &info),
                        [] { return std::string("plugin_info"); });
  return info.note;
}

}  // namespace ampx::plugins

namespace ampx::plugins {

std::optional<NativeDevice> Device::native() const {
  const LoadedPlugin::NativeHandleFns& fns = plugin_->native_handles();
  if (fns.native_device == nullptr) return std::nullopt;
  ampx_native_device out{};
  out.struct_size = sizeof out;
  ampx_status* status = plugin_->guarded(
      "native_device", [&] { return fns.native_device(plugin_->instance(), index_, &out); });
  if (status != nullptr &&
      plugin_->api().status_code(status) == AMPX_STATUS_UNSUPPORTED) {  // the host copies
    plugin_->api().status_destroy(status);
    return std::nullopt;
  }
  plugin_->check(status, fmt::format("native_device(device {})", index_));
  // A member the plugin did not write reads as zero: a NULL stream below.
  detail::clear_missing(out, detail::readable_size(out), &ampx_native_device::api,
                        &ampx_native_device::ordinal, &ampx_native_device::stream);
  if (out.api != AMPX_NATIVE_API_CUDA || out.ordinal < 0 || out.stream == nullptr)
    throw PluginLoadError(fmt::format(
        "{}: native_device(device {}) answered api {}, ordinal {}, stream {} (the ABI wants "
        "api {} (CUDA), an ordinal >= 0 and a stream)",
        plugin_->name(), index_, out.api, out.ordinal, out.stream != nullptr ? "set" : "NULL",
        static_cast<int>(AMPX_NATIVE_API_CUDA)));
  return NativeDevice{static_cast<ampx_native_api>(out.api), out.ordinal, out.stream};
}

void* Device::native_ptr(const Buffer& buffer) const {
  const LoadedPlugin::NativeHandleFns& fns = plugin_->native_handles();
  if (fns.buffer_native_ptr == nullptr)
    throw std::logic_error(fmt::format("{}: native_ptr of a device without native handles", id_));
  check_own(buffer, "native_ptr");
  void* out = nullptr;
  plugin_->check(plugin_->guarded("buffer_native_ptr",
                                  [&] { return fns.buffer_native_ptr(buffer.handle(), &out); }),
                 "buffer_native_ptr");
  if (out == nullptr)
    throw PluginLoadError(fmt::format("{}: buffer_native_ptr answered NULL", plugin_->name()));
  return out;
}

}  // namespace ampx::plugins
