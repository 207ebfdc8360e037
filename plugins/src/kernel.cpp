#include <ampx/plugins/kernel.hpp>

#include <ampx/plugins/loaded_plugin.hpp>
#include <ampx/plugins/status.hpp>

#include <spdlog/fmt/fmt.h>

#include <chrono>
#include <stdexcept>
#include <utility>

namespace ampx::plugins {
namespace {

void check_views(std::span<const ampx_buffer_view> views, size_t expected, const char* kind,
                 const std::string& op_type) {
  if (views.size() != expected) {
    throw std::invalid_argument(fmt::format("{} kernel launched with {} {}s, prepared for {}",
                                            op_type, views.size(), kind, expected));
  }
  for (size_t i = 0; i < views.size(); ++i) {
    if (views[i].buffer == nullptr) {
      throw std::invalid_argument(fmt::format("{} kernel: {} {} has no buffer", op_type, kind, i));
    }
  }
}

}  // namespace

Kernel::Kernel(std::shared_ptr<const LoadedPlugin> plugin, ampx_kernel* handle, int32_t device,
               std::string op_type, std::string node_name, size_t num_inputs,
               size_t num_outputs) noexcept
    : plugin_(std::move(plugin)),
      handle_(handle),
      device_(device),
      op_type_(std::move(op_type)),
      node_name_(std::move(node_name)),
      num_inputs_(num_inputs),
      num_outputs_(num_outputs) {}

Kernel::Kernel(Kernel&& other) noexcept
    : plugin_(std::move(other.plugin_)),
      handle_(std::exchange(other.handle_, nullptr)),
      device_(std::exchange(other.device_, -1)),
      op_type_(std::move(other.op_type_)),
      node_name_(std::move(other.node_name_)),
      num_inputs_(std::exchange(other.num_inputs_, 0)),
      num_outputs_(std::exchange(other.num_outputs_, 0)) {}

Kernel& Kernel::operator=(Kernel&& other) noexcept {
  if (this != &other) {
    reset();
    plugin_ = std::move(other.plugin_);
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = std::exchange(other.device_, -1);
    op_type_ = std::move(other.op_type_);
    node_name_ = std::move(other.node_name_);
    num_inputs_ = std::exchange(other.num_inputs_, 0);
    num_outputs_ = std::exchange(other.num_outputs_, 0);
  }
  return *this;
}

void Kernel::reset() noexcept {
  if (handle_ != nullptr) plugin_->api().kernel_destroy(handle_);
  handle_ = nullptr;
  device_ = -1;
  op_type_.clear();
  node_name_.clear();
  num_inputs_ = 0;
  num_outputs_ = 0;
  // Last: this may unload the plugin.
  plugin_.reset();
}

void Kernel::launch(std::span<const ampx_buffer_view> inputs,
                    std::span<const ampx_buffer_view> outputs) {
  if (handle_ == nullptr) throw std::logic_error("launch of an empty Kernel");
  check_views(inputs, num_inputs_, "input", op_type_);
  check_views(outputs, num_outputs_, "output", op_type_);
  plugin_->check_lazily(plugin_->api().kernel_launch(handle_, inputs.data(), inputs.size(),
                                                     outputs.data(), outputs.size()),
                        [&] {
                          return fmt::format("kernel_launch({} '{}', device {})", op_type_,
                                             node_name_, device_);
                        });
}

Kernel::Timing Kernel::launch_timed(std::span<const ampx_buffer_view> inputs,
                                    std::span<const ampx_buffer_view> outputs) {
  if (handle_ == nullptr) throw std::logic_error("launch of an empty Kernel");
  check_views(inputs, num_inputs_, "input", op_type_);
  check_views(outputs, num_outputs_, "output", op_type_);
  const ampx_plugin_api& api = plugin_->api();
  const auto what = [&](const char* fn) {
    return fmt::format("{}({} '{}', device {})", fn, op_type_, node_name_, device_);
  };
  if (api.kernel_launch_timed != nullptr) {
    double us = -1;
    ampx_status* st = api.kernel_launch_timed(handle_, inputs.data(), inputs.size(), outputs.data(),
                                              outputs.size(), &us);
    if (st != nullptr && api.status_code(st) == AMPX_STATUS_UNSUPPORTED) {
      api.status_destroy(st);  // this device cannot time: the host clock below
    } else {
      plugin_->check(st, what("kernel_launch_timed"));
      if (!(us >= 0))
        throw PluginError(plugin_->name(), what("kernel_launch_timed"), AMPX_STATUS_INTERNAL,
                          "no device time reported");
      return {us, TimingMethod::kDevice};
    }
  }
  // Earlier work first, so that only this kernel is on the clock.
  plugin_->check(api.synchronize(plugin_->instance(), device_), what("synchronize"));
  const auto t0 = std::chrono::steady_clock::now();
  launch(inputs, outputs);
  plugin_->check(api.synchronize(plugin_->instance(), device_), what("synchronize"));
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return {us, TimingMethod::kHost};
}

std::optional<Kernel::Report> Kernel::report() const {
  if (handle_ == nullptr) throw std::logic_error("report of an empty Kernel");
  const LoadedPlugin::KernelReportFn fn = plugin_->kernel_report();
  if (fn == nullptr) return std::nullopt;
  ampx_kernel_report r{};
  r.struct_size = sizeof r;
  plugin_->check(plugin_->guarded("kernel_report", [&] { return fn(handle_, &r); }),
                 fmt::format("kernel_report({} '{}', device {})", op_type_, node_name_, device_));
  // The plugin wrote at most its own size; what lies beyond stayed zero.
  r.implementation[sizeof r.implementation - 1] = '\0';
  std::string impl = r.implementation;
  // It goes into tables and JSON: printable ASCII only.
  for (char& c : impl)
    if (c < 0x20 || c > 0x7e) c = '?';
  return Report{std::move(impl), r.reorders, r.reorder_us, r.casts, r.cast_us};
}

}  // namespace ampx::plugins
