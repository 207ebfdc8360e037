#include <ampx/plugins/loaded_plugin.hpp>

#include <ampx/plugins/status.hpp>

#include "struct_io.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <boost/dll/shared_library.hpp>

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <utility>

namespace ampx::plugins {
namespace {

namespace dll = boost::dll;

// More devices than this from one plugin is taken for garbage.
constexpr int32_t kMaxDevices = 4096;
constexpr size_t kMaxNameLength = 64;
constexpr size_t kMaxVersionLength = 128;

// A plugin-supplied C string for a message: at most `limit` characters,
// non-printable ones as '?'.
std::string printable(const char* text, size_t limit) {
  std::string out(text, strnlen(text, limit));
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return out;
}

bool valid_plugin_name(const char* name) {
  const size_t length = strnlen(name, kMaxNameLength + 1);
  if (length == 0 || length > kMaxNameLength) return false;
  return std::all_of(name, name + length, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string dl_error_text(const dll::fs::error_code& ec) {
#if !defined(_WIN32)
  // Boost.DLL turns every dlopen failure into one error code; the useful text
  // ("undefined symbol: ...", "invalid ELF header") is still in dlerror().
  if (const char* text = dlerror()) return text;
#endif
  return ec.message();
}

}  // namespace

struct LoadedPlugin::Library {
  dll::shared_library dll;
};

LoadedPlugin::LoadedPlugin() = default;

LoadedPlugin::~LoadedPlugin() {
  // Order matters: the instance is destroyed while its code is still mapped.
  destroy_instance();
  if (library_) library_->dll.unload();
}

void LoadedPlugin::destroy_instance() noexcept {
  if (instance_ != nullptr) api_.plugin_destroy(instance_);
  instance_ = nullptr;
}

// What a plugin declares in its extension chain (backend_api.h,
// "Extensions"): the options it documents (1.2), how its f16 kernels
// accumulate (1.3), its kernels' reports (1.4) and its native handles
// (1.6). Unknown types are skipped, a malformed chain is an error.
void read_extensions(const ampx_extension* ext, std::vector<PluginOption>& out,
                     std::optional<ampx_accumulation>& f16_accumulation,
                     LoadedPlugin::KernelReportFn& kernel_report,
                     LoadedPlugin::NativeHandleFns& native_handles) {
  const auto text = [](const char* s) { return s ? printable(s, 256) : std::string(); };
  for (int n = 0; ext != nullptr; ext = ext->next, ++n) {
    if (n >= AMPX_EXTENSION_CHAIN_MAX)
      throw std::invalid_argument(fmt::format("extension chain longer than {} links (or cyclic)",
                                              AMPX_EXTENSION_CHAIN_MAX));
    if (ext->struct_size < sizeof(ampx_extension))
      throw std::invalid_argument(
          fmt::format("extension {} (type {}) has struct_size {}, smaller than its header", n,
                      ext->type, ext->struct_size));
    if (ext->type == AMPX_EXTENSION_NUMERICS) {
      const auto* num = reinterpret_cast<const ampx_numerics_extension*>(ext);
      if (!detail::has_member(*num, num->base.struct_size,
                              &ampx_numerics_extension::f16_accumulation))
        continue;
      if (num->f16_accumulation != AMPX_ACCUMULATE_F32 &&
          num->f16_accumulation != AMPX_ACCUMULATE_F16)
        throw std::invalid_argument(
            fmt::format("numerics extension: unknown f16_accumulation {}", num->f16_accumulation));
      f16_accumulation = static_cast<ampx_accumulation>(num->f16_accumulation);
      continue;
    }
    if (ext->type == AMPX_EXTENSION_KERNEL_INFO) {
      const auto* info = reinterpret_cast<const ampx_kernel_info_extension*>(ext);
      if (detail::has_member(*info, info->base.struct_size,
                             &ampx_kernel_info_extension::kernel_report))
        kernel_report = info->kernel_report;
      continue;
    }
    if (ext->type == AMPX_EXTENSION_NATIVE_HANDLES) {
      // Half of it is no use: without either member the host copies.
      const auto* nat = reinterpret_cast<const ampx_native_handles_extension*>(ext);
      if (detail::has_member(*nat, nat->base.struct_size,
                             &ampx_native_handles_extension::buffer_native_ptr) &&
          nat->native_device != nullptr && nat->buffer_native_ptr != nullptr)
        native_handles = {nat->native_device, nat->buffer_native_ptr};
      continue;
    }
    if (ext->type != AMPX_EXTENSION_OPTIONS) continue;
    const auto* opts = reinterpret_cast<const ampx_options_extension*>(ext);
    if (!detail::has_member(*opts, opts->base.struct_size, &ampx_options_extension::options))
      continue;
    if (opts->num_options == 0) continue;
    if (opts->options == nullptr || opts->num_options > 1024 ||
        opts->options[0].struct_size < AMPX_STRUCT_SIZE(ampx_option_desc, key))
      throw std::invalid_argument(
          fmt::format("options extension: {} options at {}, element struct_size {}",
                      opts->num_options, static_cast<const void*>(opts->options),
                      opts->options ? opts->options[0].struct_size : 0));
    const size_t stride = opts->options[0].struct_size;
    for (size_t i = 0; i < opts->num_options; ++i) {
      const auto& d = *reinterpret_cast<const ampx_option_desc*>(
          reinterpret_cast<const char*>(opts->options) + i * stride);
      PluginOption o;
      o.key = text(d.key);
      if (detail::has_member(d, stride, &ampx_option_desc::values)) o.values = text(d.values);
      if (detail::has_member(d, stride, &ampx_option_desc::doc)) o.doc = text(d.doc);
      if (!o.key.empty()) out.push_back(std::move(o));
    }
  }
}

std::unique_ptr<LoadedPlugin> LoadedPlugin::open(const std::filesystem::path& file) {
  std::unique_ptr<LoadedPlugin> plugin(new LoadedPlugin());
  plugin->file_ = file;
  const std::string file_name = file.filename().string();
  const auto fail = [&](std::string_view detail) {
    return PluginLoadError(file_name + ": " + std::string(detail));
  };

  // rtld_now: an unresolved symbol fails here, not at the first call.
  // rtld_local: plugins cannot interpose on each other or on the host.
  plugin->library_ = std::make_unique<Library>();
  dll::shared_library& library = plugin->library_->dll;
  dll::fs::error_code ec;
  std::error_code abs_ec;
  const std::filesystem::path absolute = std::filesystem::absolute(file, abs_ec);
  library.load(abs_ec ? file : absolute, dll::load_mode::rtld_now | dll::load_mode::rtld_local, ec);
  if (ec || !library.is_loaded()) throw fail("cannot load: " + dl_error_text(ec));

  if (!library.has(AMPX_PLUGIN_ENTRY_SYMBOL)) {
    throw fail("no entry symbol '" AMPX_PLUGIN_ENTRY_SYMBOL "'");
  }
  const ampx_plugin_entry_fn entry =
      &library.get<const ampx_plugin_api*()>(AMPX_PLUGIN_ENTRY_SYMBOL);
  const ampx_plugin_api* table = nullptr;
  try {
    table = LoadedPlugin::guarded_call(file_name, AMPX_PLUGIN_ENTRY_SYMBOL, entry);
  } catch (const PluginThrew& e) {
    throw PluginLoadError(e.what());
  }
  if (table == nullptr) throw fail(AMPX_PLUGIN_ENTRY_SYMBOL " returned NULL");

  // The version fields must be readable before anything else is believed.
  constexpr size_t kMinSize = AMPX_PLUGIN_API_MIN_SIZE_V1;
  constexpr size_t kVersionEnd = offsetof(ampx_plugin_api, abi_minor) + sizeof(uint32_t);
  const size_t table_size = table->struct_size;
  const auto too_small = [&] {
    return fail(fmt::format("function table struct_size {} is smaller than the v{} minimum {}",
                            table_size, AMPX_ABI_VERSION_MAJOR, kMinSize));
  };
  if (table_size < kVersionEnd) throw too_small();
  // A different major may lay the table out differently: check it before the
  // size, which only means something for v1.
  if (table->abi_major != AMPX_ABI_VERSION_MAJOR) {
    throw fail(fmt::format("plugin ABI {}.{}, host ABI {}.{}", table->abi_major, table->abi_minor,
                           AMPX_ABI_VERSION_MAJOR, AMPX_ABI_VERSION_MINOR));
  }
  if (table_size < kMinSize) throw too_small();

  // Host-sized copy: members past the plugin's table read as NULL.
  ampx_plugin_api& api = plugin->api_;
  const size_t copied = std::min(table_size, sizeof(ampx_plugin_api));
  std::memcpy(&api, table, copied);
  detail::clear_missing(api, copied, &ampx_plugin_api::buffer_host_ptr,
                        &ampx_plugin_api::kernel_launch_timed, &ampx_plugin_api::extensions);
  api.struct_size = sizeof(ampx_plugin_api);
  plugin->table_size_ = table_size;
  plugin->abi_major_ = table->abi_major;
  plugin->abi_minor_ = table->abi_minor;

  const std::array<std::pair<const char*, bool>, 18> required{{
      {"status_code", api.status_code == nullptr},
      {"status_message", api.status_message == nullptr},
      {"status_destroy", api.status_destroy == nullptr},
      {"plugin_create", api.plugin_create == nullptr},
      {"plugin_destroy", api.plugin_destroy == nullptr},
      {"plugin_info", api.plugin_info == nullptr},
      {"device_count", api.device_count == nullptr},
      {"device_props", api.device_props == nullptr},
      {"query_capability", api.query_capability == nullptr},
      {"buffer_alloc", api.buffer_alloc == nullptr},
      {"buffer_free", api.buffer_free == nullptr},
      {"copy_to_device", api.copy_to_device == nullptr},
      {"copy_to_host", api.copy_to_host == nullptr},
      {"copy_device_to_device", api.copy_device_to_device == nullptr},
      {"kernel_prepare", api.kernel_prepare == nullptr},
      {"kernel_launch", api.kernel_launch == nullptr},
      {"kernel_destroy", api.kernel_destroy == nullptr},
      {"synchronize", api.synchronize == nullptr},
  }};
  static_assert(offsetof(ampx_plugin_api, synchronize) + sizeof(void*) == kMinSize,
                "a required member was added: list it above");
  for (const auto& [member, missing] : required) {
    if (missing) throw fail(fmt::format("required member '{}' is NULL", member));
  }

  if (api.plugin_name == nullptr) throw fail("plugin_name is NULL");
  if (!valid_plugin_name(api.plugin_name)) {
    throw fail(
        fmt::format("invalid plugin_name '{}' (must match [a-z0-9_]+, at most {} characters)",
                    printable(api.plugin_name, kMaxNameLength + 1), kMaxNameLength));
  }
  if (api.plugin_version == nullptr) throw fail("plugin_version is NULL");
  plugin->name_ = api.plugin_name;
  plugin->version_ = printable(api.plugin_version, kMaxVersionLength);
  try {
    read_extensions(api.extensions, plugin->options_, plugin->declared_f16_accumulation_,
                    plugin->kernel_report_, plugin->native_handles_);
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }

  if (plugin->abi_minor_ > AMPX_ABI_VERSION_MINOR) {
    spdlog::debug(
        "plugin {} ({}) has ABI {}.{}, newer than host ABI {}.{}: using the v{}.{} "
        "members",
        plugin->name_, file_name, plugin->abi_major_, plugin->abi_minor_, AMPX_ABI_VERSION_MAJOR,
        AMPX_ABI_VERSION_MINOR, AMPX_ABI_VERSION_MAJOR, AMPX_ABI_VERSION_MINOR);
  }
  return plugin;
}

void LoadedPlugin::create(const PluginCreateOptions& options) {
  if (instance_ != nullptr) throw std::logic_error("LoadedPlugin::create called twice");
  const std::string file_name = file_.filename().string();

  ampx_plugin_create_args args{};
  args.struct_size = sizeof(args);
  args.log_level = std::clamp<int32_t>(options.log_level, 0, 6);
  args.options = options.options.empty() ? nullptr : options.options.c_str();
  ampx_plugin* instance = nullptr;
  // On failure `instance` is ignored: the ABI gives the host nothing to own.
  check(guarded("plugin_create", [&] { return api_.plugin_create(&args, &instance); }),
        "plugin_create");
  if (instance == nullptr) {
    throw PluginLoadError(file_name + ": plugin_create succeeded but returned no instance");
  }
  instance_ = instance;
  // From here on a throw leaves instance_ set; the destructor destroys it.

  ampx_plugin_info info{};
  info.struct_size = sizeof(info);
  check(guarded("plugin_info", [&] { return api_.plugin_info(instance_, &info); }), "plugin_info");
  detail::clear_missing(info, detail::readable_size(info), &ampx_plugin_info::note,
                        &ampx_plugin_info::library);
  detail::terminate(info.note);
  detail::terminate(info.library);
  note_ = detail::fixed_string(info.note);
  library_name_ = detail::fixed_string(info.library);

  int32_t count = 0;
  check(guarded("device_count", [&] { return api_.device_count(instance_, &count); }),
        "device_count");
  if (count < 0 || count > kMaxDevices) {
    throw PluginLoadError(fmt::format("{}: device_count returned {}", file_name, count));
  }

  std::vector<ampx_device_props> devices;
  devices.reserve(static_cast<size_t>(count));
  for (int32_t index = 0; index < count; ++index) {
    ampx_device_props props{};
    props.struct_size = sizeof(props);
    const std::string operation = fmt::format("device_props({})", index);
    check(guarded(operation, [&] { return api_.device_props(instance_, index, &props); }),
          operation);
    using P = ampx_device_props;
    detail::clear_missing(props, detail::readable_size(props), &P::name, &P::vendor,
                          &P::driver_version, &P::fingerprint, &P::memory_bytes, &P::type,
                          &P::compute_units);
    props.struct_size = sizeof(props);
    detail::terminate(props.name);
    detail::terminate(props.vendor);
    detail::terminate(props.driver_version);
    detail::terminate(props.fingerprint);
    switch (static_cast<int>(props.type)) {
      case AMPX_DEVICE_CPU:
      case AMPX_DEVICE_GPU:
      case AMPX_DEVICE_OTHER:
        break;
      case 0:  // not reported
        props.type = AMPX_DEVICE_OTHER;
        break;
      default:
        spdlog::warn("plugin {} device {}: invalid device type {}, using OTHER", name_, index,
                     static_cast<int>(props.type));
        props.type = AMPX_DEVICE_OTHER;
    }
    if (props.compute_units < 0) props.compute_units = 0;
    devices.push_back(props);
  }
  devices_ = std::move(devices);
}

void LoadedPlugin::check(ampx_status* status, std::string_view operation) const {
  Status(api_, status).throw_if_error(name_, operation);
}

}  // namespace ampx::plugins
