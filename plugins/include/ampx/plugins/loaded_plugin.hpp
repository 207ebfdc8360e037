// One backend plugin library: the loaded shared object, its validated function
// table and the plugin instance created from it.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/plugins/status.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ampx::plugins {

// A plugin could not be loaded or failed validation. what() starts with the
// plugin's file name, e.g.
//   "libampx_backend_x.so: plugin ABI 2.0, host ABI 1.0".
class PluginLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PluginCreateOptions {
  int32_t log_level = 2;  // 0 = trace .. 6 = off
  std::string options;    // "key=value;key=value", passed as-is (NULL when empty)
};

// Loaded in two phases so that the host can reject a plugin by name
// (duplicates, exclusions) before it creates an instance:
//   1. open():   load the library, find the entry symbol, validate the table;
//   2. create(): plugin_create, plugin_info, device_count, device_props.
// Destruction calls plugin_destroy (when created) and then unloads the
// library. Devices, buffers and kernels hold a shared_ptr to their
// LoadedPlugin, so neither happens while any of them is alive.
//
// Not thread-safe, like the plugin instance itself (the ABI allows one host
// thread at a time per instance).
// One option key a plugin documents (its AMPX_EXTENSION_OPTIONS extension).
struct PluginOption {
  std::string key, values, doc;
};

class LoadedPlugin {
 public:
  // Phase 1. Throws PluginLoadError.
  static std::unique_ptr<LoadedPlugin> open(const std::filesystem::path& file);

  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;
  ~LoadedPlugin();

  // Phase 2. Throws PluginLoadError (a contract violation such as a negative
  // device count) or PluginError (a failing call, with the plugin's message).
  // On failure the instance, if any, is destroyed again; the object may then
  // only be destroyed.
  void create(const PluginCreateOptions& options);
  bool created() const noexcept { return instance_ != nullptr; }

  const std::filesystem::path& file() const noexcept { return file_; }
  const std::string& name() const noexcept { return name_; }
  const std::string& version() const noexcept { return version_; }
  uint32_t abi_major() const noexcept { return abi_major_; }
  uint32_t abi_minor() const noexcept { return abi_minor_; }
  // The table's struct_size as the plugin reported it.
  size_t table_size() const noexcept { return table_size_; }
  // The option keys the plugin documents (ABI 1.2; empty for older plugins).
  const std::vector<PluginOption>& options() const noexcept { return options_; }
  // How its f16 kernels accumulate (ABI 1.3 numerics extension; without
  // one, AMPX_ACCUMULATE_F32): the accuracy bar it is held to.
  ampx_accumulation f16_accumulation() const noexcept {
    return declared_f16_accumulation_.value_or(AMPX_ACCUMULATE_F32);
  }
  bool declares_numerics() const noexcept { return declared_f16_accumulation_.has_value(); }
  // Its kernels' reports (ABI 1.4 kernel-info extension), or NULL.
  using KernelReportFn = ampx_status* (*)(ampx_kernel*, ampx_kernel_report*);
  KernelReportFn kernel_report() const noexcept { return kernel_report_; }
  // Its native handles (ABI 1.6 native-handles extension): both members, or
  // both NULL when the plugin publishes none (or one too short to hold them).
  struct NativeHandleFns {
    ampx_status* (*native_device)(ampx_plugin*, int32_t, ampx_native_device*) = nullptr;
    ampx_status* (*buffer_native_ptr)(ampx_buffer*, void**) = nullptr;
  };
  const NativeHandleFns& native_handles() const noexcept { return native_handles_; }

  // The host's copy of the table, host-sized: members beyond the plugin's
  // struct_size are NULL, so optional members may simply be tested.
  const ampx_plugin_api& api() const noexcept { return api_; }
  ampx_plugin* instance() const noexcept { return instance_; }

  // From plugin_info (after create()).
  const std::string& note() const noexcept { return note_; }
  const std::string& library() const noexcept { return library_name_; }
  // One entry per device (after create()), host-sized, struct_size set to
  // sizeof(ampx_device_props), members the plugin did not report zeroed,
  // strings NUL-terminated.
  const std::vector<ampx_device_props>& device_props() const noexcept { return devices_; }

  // Converts a status returned by one of this plugin's functions: NULL does
  // nothing, anything else is released and thrown as PluginError
  // "<name>: <operation>: <message>".
  void check(ampx_status* status, std::string_view operation) const;
  // The same, with the operation's description made only on failure: for
  // the per-launch calls, where formatting it every time cost more than a
  // small kernel.
  template <class Describe>
  void check_lazily(ampx_status* status, Describe&& describe) const {
    if (status != nullptr) check(status, describe());
  }

  // Makes one call into the plugin: a C++ exception that crosses the C ABI
  // (the header forbids it) is caught here and thrown as PluginThrew,
  // naming this plugin and `operation`. Free on the normal path.
  template <class Call>
  decltype(auto) guarded(std::string_view operation, Call&& call) const {
    return guarded_call(name_, operation, std::forward<Call>(call));
  }
  template <class Call>
  static decltype(auto) guarded_call(std::string_view plugin, std::string_view operation,
                                     Call&& call) {
    try {
      return call();
    } catch (const std::exception& e) {
      throw PluginThrew(std::string(plugin), std::string(operation), e.what());
    } catch (...) {
      throw PluginThrew(std::string(plugin), std::string(operation), "not a std::exception");
    }
  }

 private:
  struct Library;  // the shared object (Boost.DLL stays out of this header)

  LoadedPlugin();
  void destroy_instance() noexcept;

  std::unique_ptr<Library> library_;
  std::filesystem::path file_;
  ampx_plugin_api api_{};
  size_t table_size_ = 0;
  uint32_t abi_major_ = 0;
  uint32_t abi_minor_ = 0;
  std::string name_;
  std::string version_;
  std::vector<PluginOption> options_;
  std::optional<ampx_accumulation> declared_f16_accumulation_;
  KernelReportFn kernel_report_ = nullptr;
  NativeHandleFns native_handles_;
  ampx_plugin* instance_ = nullptr;
  std::string note_;
  std::string library_name_;
  std::vector<ampx_device_props> devices_;
};

}  // namespace ampx::plugins
