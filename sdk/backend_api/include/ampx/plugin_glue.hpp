// The plugin glue of the SDK: everything of the C ABI a plugin author would
// otherwise write again, so that a plugin keeps only device code.
//
//   class MyPlugin { ... };   // the requirements are listed below
//   extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
//     return ampx::plugin_support::plugin_entry<MyPlugin>();
//   }
//
// make_table<Impl>() fills the whole function table. Its entry points:
//   - run inside guard(): no exception crosses the boundary, StatusError
//     keeps its code, std::invalid_argument becomes INVALID_ARGUMENT ...;
//   - answer NULL handles and arguments, out-of-range devices, byte ranges
//     outside a buffer, wrong launch arities, views without a buffer or on
//     another device, with INVALID_ARGUMENT and one line naming the function
//     (or the node) and the value, before Impl sees anything;
//   - read create args, views and node descriptions with the struct_size and
//     array-stride rules of backend_api.h, and write the structs the plugin
//     fills with write_out_struct();
//   - parse the options string (PluginOptions): the keys Impl documents in
//     kOptions are read by Impl, others are ignored with a debug log;
//   - prefix errors from prepare and launch with the node ("node 'x' (Op):");
//   - publish kOptions as the AMPX_EXTENSION_OPTIONS extension (ABI 1.2)
//     and the compute mode as AMPX_EXTENSION_NUMERICS (ABI 1.3), and, when
//     Impl's kernels report themselves, AMPX_EXTENSION_KERNEL_INFO (ABI 1.4),
//     and when Impl hands out native handles, AMPX_EXTENSION_NATIVE_HANDLES
//     (ABI 1.6);
//   - keep the live plugin, buffer, kernel and status handles, so that NULL
//     and a second destroy of one are ignored (backend_api.h).
//
// Requirements on Impl (a missing one is a compile error naming it):
//   static constexpr const char* kName;     // plugin_name, [a-z0-9_]+
//   static constexpr const char* kVersion;  // plugin_version
//   static constexpr ... kOptions;         // documented keys: a std::array<OptionSpec, N>
//                                          // (N may be 0) or a std::span<const OptionSpec>
//   explicit Impl(const PluginOptions&);    // plugin_create; may throw
//   std::string note() const;               // plugin_info.note
//   std::string library() const;            // plugin_info.library
//   int32_t device_count() const;
//   ampx_device_props device_props(int32_t device) const;
//   Capability capability(int32_t device, const NodeView& node) const;
//   Buffer alloc(int32_t device, uint64_t bytes);          // a movable value
//   void write(Buffer& dst, uint64_t off, const void* src, uint64_t bytes);
//   void read(void* dst, const Buffer& src, uint64_t off, uint64_t bytes);
//   void copy(BufferRef<Buffer> dst, BufferRef<Buffer> src, uint64_t bytes);
//   std::unique_ptr<Kernel> prepare(int32_t device, const NodeView& node);
//   void synchronize(int32_t device);
// where Kernel has
//   void launch(std::span<const View<Buffer>> ins, std::span<const View<Buffer>> outs);
// and optionally
//   static constexpr ampx_accumulation kF16Accumulation;  // default AMPX_ACCUMULATE_F32
//   double launch_timed(ins, outs);   // -> kernel_launch_timed (device us)
//   KernelReport report() const;      // -> AMPX_EXTENSION_KERNEL_INFO (ABI 1.4)
//   void release(Buffer&) noexcept;   // Impl: called before a buffer is freed
//   void* host_ptr(Buffer&) noexcept; // Impl: -> buffer_host_ptr
//   ampx_native_device native_device(int32_t device);  // both: ->
//   void* native_ptr(Buffer&);        //   AMPX_EXTENSION_NATIVE_HANDLES (ABI 1.6)
// The glue has checked every device index, range and view before these run:
// `device` is in [0, device_count()), a view's bytes lie inside its buffer,
// and every view of a launch is on the kernel's device.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/plugin_support.hpp"

namespace ampx::plugin_support {

// ------------------------------------------------------------- messages

[[noreturn]] inline void invalid(const std::string& what) {
  throw StatusError(AMPX_STATUS_INVALID_ARGUMENT, what);
}

// offset + bytes within size, without overflow.
inline void check_range(std::string_view what, uint64_t size, uint64_t offset, uint64_t bytes) {
  if (offset > size || bytes > size - offset)
    invalid(std::string(what) + ": range [" + std::to_string(offset) + ", " +
            std::to_string(offset) + " + " + std::to_string(bytes) + ") is outside the buffer of " +
            std::to_string(size) + " bytes");
}

// Runs fn; errors leave with "<where>: " in front (unless they already name
// a node) and keep their status code.
template <class Fn>
decltype(auto) with_node(const std::string& where, Fn&& fn) {
  const auto prefixed = [&](const std::string& m) {
    return m.rfind("node '", 0) == 0 ? m : where + ": " + m;
  };
  try {
    return std::forward<Fn>(fn)();
  } catch (const StatusError& e) {
    throw StatusError(e.code(), prefixed(e.what()));
  } catch (const std::invalid_argument& e) {
    throw StatusError(AMPX_STATUS_INVALID_ARGUMENT, prefixed(e.what()));
  } catch (const std::out_of_range& e) {
    throw StatusError(AMPX_STATUS_INVALID_ARGUMENT, prefixed(e.what()));
  } catch (const std::bad_alloc&) {
    throw StatusError(AMPX_STATUS_OUT_OF_MEMORY, where + ": out of host memory");
  } catch (const std::exception& e) {
    throw StatusError(AMPX_STATUS_INTERNAL, prefixed(e.what()));
  }
}

// ----------------------------------------------------------------- logs

// Log levels of ampx_plugin_create_args::log_level.
enum class LogLevel : int32_t { trace = 0, debug = 1, info = 2, warn = 3, error = 4, off = 6 };

// One line on stderr, "[ampx <plugin>] <message>", when `level` is at or
// above the host's level.
inline void plugin_log(int32_t host_level, LogLevel level, std::string_view plugin,
                       std::string_view message) noexcept {
  if (static_cast<int32_t>(level) < host_level || host_level >= 6) return;
  std::fprintf(stderr, "[ampx %.*s] %.*s\n", static_cast<int>(plugin.size()), plugin.data(),
               static_cast<int>(message.size()), message.data());
}

// -------------------------------------------------------------- options

// One documented option key (backend_api.h, "Options"; docs/PLUGINS.md).
struct OptionSpec {
  const char* key;
  const char* values;  // e.g. "1..4096", "on|off"
  const char* doc;
};

// The create args as the plugin sees them: log level and options, read
// within the host's struct_size. Keys the plugin does not document are
// ignored with a debug log; a documented key's malformed value is an error.
class PluginOptions {
 public:
  PluginOptions(std::string_view plugin, const ampx_plugin_create_args* args,
                std::span<const OptionSpec> known)
      : plugin_(plugin) {
    const char* options = nullptr;
    if (args) {
      if (AMPX_HAS_MEMBER(*args, ampx_plugin_create_args, log_level)) log_level_ = args->log_level;
      if (AMPX_HAS_MEMBER(*args, ampx_plugin_create_args, options)) options = args->options;
    }
    for (auto& [key, value] : split_options(options)) {
      bool documented = false;
      for (const OptionSpec& o : known) documented = documented || key == o.key;
      if (!documented) {
        std::string list;
        for (const OptionSpec& o : known) list += (list.empty() ? "" : ", ") + std::string(o.key);
        plugin_log(log_level_, LogLevel::debug, plugin_,
                   "option '" + key + "' ignored (" + plugin_ +
                       " options: " + (list.empty() ? "none" : list) + ")");
        continue;
      }
      values_.emplace_back(std::move(key), std::move(value));
    }
  }

  int32_t log_level() const noexcept { return log_level_; }
  const std::string& plugin() const noexcept { return plugin_; }

  // The value of a documented key (the last one given), or nullopt.
  std::optional<std::string> find(std::string_view key) const {
    for (auto it = values_.rbegin(); it != values_.rend(); ++it)
      if (it->first == key) return it->second;
    return std::nullopt;
  }
  // An integer in [lo, hi], or `def` when absent.
  long integer(std::string_view key, long def, long lo, long hi) const {
    const auto v = find(key);
    return v ? int_option(plugin_, std::string(key), *v, lo, hi) : def;
  }
  // One of `allowed`, or `def` when absent.
  std::string choice(std::string_view key, std::string def,
                     std::initializer_list<std::string_view> allowed) const {
    const auto v = find(key);
    if (!v) return def;
    std::string list;
    for (std::string_view a : allowed) {
      if (*v == a) return *v;
      list += (list.empty() ? "" : "|") + std::string(a);
    }
    throw std::invalid_argument(plugin_ + " option " + std::string(key) + "='" + *v +
                                "': expected " + list);
  }

 private:
  std::string plugin_;
  int32_t log_level_ = 2;
  std::vector<std::pair<std::string, std::string>> values_;
};

// ---------------------------------------------------------- capabilities

// The answer for one node (query_capability's out-struct, as a value).
struct Capability {
  ampx_support support = AMPX_SUPPORT_UNSUPPORTED;
  double cost_us = -1;  // < 0: no estimate
  std::string note;     // truncated to ampx_capability::note
};

// A kernel's report (ABI 1.4 kernel_report's out-struct, as a value): what
// it runs on and what its last launch did besides it (backend_api.h,
// "Kernel reports").
struct KernelReport {
  std::string implementation;  // truncated to ampx_kernel_report::implementation
  uint64_t reorders = 0;
  double reorder_us = 0;
  uint64_t casts = 0;  // of `reorders`, those that changed the dtype
  double cast_us = 0;
};

// ----------------------------------------------------------- the handles

// What the glue keeps around an Impl's buffer: ampx_buffer* is one of these.
template <class Impl>
struct BufferHandle {
  Impl* owner;
  int32_t device;
  uint64_t size;
  typename Impl::Buffer buffer;
};

// A byte range of a buffer, checked against its size (copy's arguments).
template <class Buffer>
struct BufferRef {
  Buffer& buffer;
  int32_t device;
  uint64_t offset;
};

// One tensor of a launch: a checked view of exactly the tensor's bytes.
template <class Buffer>
struct View {
  Buffer* buffer;
  uint64_t offset;
  uint64_t bytes;
  size_t align;  // the element size
};

// The byte size and element size of every input and output of a node.
struct KernelSignature {
  std::string where;  // "node 'x' (Op)"
  struct Slot {
    uint64_t bytes;
    size_t align;
  };
  std::vector<Slot> ins, outs;

  static KernelSignature of(const NodeView& v) {
    KernelSignature s{v.where(), {}, {}};
    for (size_t i = 0; i < v.num_inputs(); ++i)
      s.ins.push_back({byte_size(v.input(i)), dtype_size(v.input(i).dtype)});
    for (size_t i = 0; i < v.num_outputs(); ++i)
      s.outs.push_back({byte_size(v.output(i)), dtype_size(v.output(i).dtype)});
    return s;
  }
};

template <class Impl>
struct KernelHandle {
  Impl* owner;
  int32_t device;
  KernelSignature signature;
  std::unique_ptr<typename Impl::Kernel> kernel;
  std::vector<View<typename Impl::Buffer>> ins, outs;  // per-launch scratch
};

// ------------------------------------------------------------- staging

// Which tensors of a launch a kernel that wants element-aligned tensors and
// outputs apart from every other tensor must see through a staging copy.
// `address(view)` is the view's address in the device's address space.
struct Staging {
  std::vector<char> input, output;  // 1: stage
  bool any() const noexcept {
    for (char c : input)
      if (c) return true;
    for (char c : output)
      if (c) return true;
    return false;
  }
};

template <class Buffer, class AddressFn>
Staging plan_staging(std::span<const View<Buffer>> ins, std::span<const View<Buffer>> outs,
                     AddressFn&& address) {
  const auto misaligned = [&](const View<Buffer>& v) {
    return address(v) % std::max<size_t>(v.align, 1) != 0;
  };
  const auto overlap = [&](const View<Buffer>& a, const View<Buffer>& b) {
    if (!a.bytes || !b.bytes) return false;
    const uintptr_t pa = address(a), pb = address(b);
    return pa < pb + b.bytes && pb < pa + a.bytes;
  };
  Staging s{std::vector<char>(ins.size()), std::vector<char>(outs.size())};
  for (size_t i = 0; i < ins.size(); ++i) s.input[i] = misaligned(ins[i]);
  for (size_t i = 0; i < outs.size(); ++i) {
    bool need = misaligned(outs[i]);
    for (size_t j = 0; !need && j < ins.size(); ++j) need = overlap(outs[i], ins[j]);
    for (size_t j = 0; !need && j < i; ++j) need = overlap(outs[i], outs[j]);
    s.output[i] = need;
  }
  return s;
}

// ----------------------------------------------------------- the table

namespace glue_detail {

template <class Impl>
Impl& plugin_of(ampx_plugin* p, const char* fn) {
  if (!p) invalid(std::string(fn) + ": NULL plugin");
  return *reinterpret_cast<Impl*>(p);
}

template <class Impl>
void check_device(const Impl& impl, int32_t device, const char* fn) {
  const int32_t n = impl.device_count();
  if (device < 0 || device >= n)
    invalid(std::string(fn) + ": device index " + std::to_string(device) + " out of range (" +
            Impl::kName + " has " + std::to_string(n) + (n == 1 ? " device)" : " devices)"));
}

template <class Impl>
BufferHandle<Impl>* buffer_of(ampx_buffer* b) noexcept {
  return reinterpret_cast<BufferHandle<Impl>*>(b);
}
template <class Impl>
BufferHandle<Impl>* buffer_of(const ampx_buffer* b) noexcept {
  return reinterpret_cast<BufferHandle<Impl>*>(const_cast<ampx_buffer*>(b));
}

// Resolves the host's view array (element 0's struct_size is the stride).
template <class Impl>
void resolve_views(const KernelHandle<Impl>& k, const ampx_buffer_view* views, size_t n,
                   const std::vector<KernelSignature::Slot>& slots, const char* what,
                   std::vector<View<typename Impl::Buffer>>& out) {
  out.clear();
  if (n == 0) return;
  const std::string& where = k.signature.where;
  if (!views) invalid("kernel_launch: " + where + ": NULL " + what + " views");
  if (!AMPX_HAS_MEMBER(views[0], ampx_buffer_view, offset))
    invalid("kernel_launch: " + where + ": " + what + " view struct_size too small");
  for (size_t i = 0; i < n; ++i) {
    const ampx_buffer_view& v = *reinterpret_cast<const ampx_buffer_view*>(
        reinterpret_cast<const char*>(views) + i * views[0].struct_size);
    // The label only on failure: this runs for every tensor of every launch.
    const auto label = [&] { return where + ": " + what + " " + std::to_string(i); };
    if (!v.buffer) invalid("kernel_launch: " + label() + " has no buffer");
    BufferHandle<Impl>* b = buffer_of<Impl>(v.buffer);
    if (b->owner != k.owner || b->device != k.device)
      invalid("kernel_launch: " + label() + " is on " + Impl::kName + ":" +
              std::to_string(b->device) + ", the kernel on " + Impl::kName + ":" +
              std::to_string(k.device));
    const uint64_t bytes = slots[i].bytes;
    if (v.offset > b->size || bytes > b->size - v.offset)
      invalid("kernel_launch: " + label() + " needs " + std::to_string(bytes) +
              " bytes at offset " + std::to_string(v.offset) + " but the buffer has " +
              std::to_string(b->size));
    out.push_back({&b->buffer, v.offset, bytes, slots[i].align});
  }
}

template <class Impl>
KernelHandle<Impl>& checked_launch(ampx_kernel* kernel, const ampx_buffer_view* inputs,
                                   size_t num_inputs, const ampx_buffer_view* outputs,
                                   size_t num_outputs) {
  if (!kernel) invalid("kernel_launch: NULL kernel");
  auto& k = *reinterpret_cast<KernelHandle<Impl>*>(kernel);
  const KernelSignature& s = k.signature;
  if (num_inputs != s.ins.size() || num_outputs != s.outs.size())
    invalid("kernel_launch: " + s.where + " expects " + std::to_string(s.ins.size()) +
            " inputs and " + std::to_string(s.outs.size()) + " outputs, got " +
            std::to_string(num_inputs) + " and " + std::to_string(num_outputs));
  resolve_views(k, inputs, num_inputs, s.ins, "input", k.ins);
  resolve_views(k, outputs, num_outputs, s.outs, "output", k.outs);
  return k;
}

template <class Impl>
concept HasTimedLaunch = requires(typename Impl::Kernel& k,
                                  std::span<const View<typename Impl::Buffer>> v) {
  { k.launch_timed(v, v) } -> std::convertible_to<double>;
};
template <class Impl>
concept HasRelease = requires(Impl& impl, typename Impl::Buffer& b) {
  impl.release(b);
};
template <class Impl>
concept HasHostPtr = requires(Impl& impl, typename Impl::Buffer& b) {
  { impl.host_ptr(b) } -> std::convertible_to<void*>;
};

template <class Impl>
concept HasKernelReport = requires(const typename Impl::Kernel& k) {
  { k.report() } -> std::convertible_to<KernelReport>;
};

template <class Impl>
concept HasNativeHandles = requires(Impl& impl, typename Impl::Buffer& b) {
  { impl.native_device(int32_t{0}) } -> std::convertible_to<ampx_native_device>;
  { impl.native_ptr(b) } -> std::convertible_to<void*>;
};

template <class Impl>
concept DeclaresAccumulation = requires {
  { Impl::kF16Accumulation } -> std::convertible_to<ampx_accumulation>;
};

// The numerics extension (ABI 1.3): how Impl's f16 kernels accumulate.
template <class Impl>
const ampx_extension* numerics_extension(const ampx_extension* next) noexcept {
  static const ampx_numerics_extension ext{
      {sizeof(ampx_numerics_extension), AMPX_EXTENSION_NUMERICS, next}, [] {
        if constexpr (DeclaresAccumulation<Impl>)
          return static_cast<int32_t>(Impl::kF16Accumulation);
        else
          return static_cast<int32_t>(AMPX_ACCUMULATE_F32);
      }()};
  return &ext.base;
}

// The kernel-info extension (ABI 1.4): Impl's kernels' reports.
template <class Impl>
const ampx_extension* kernel_info_extension(const ampx_extension* next) noexcept {
  if constexpr (HasKernelReport<Impl>) {
    static const ampx_kernel_info_extension ext{
        {sizeof(ampx_kernel_info_extension), AMPX_EXTENSION_KERNEL_INFO, next},
        [](ampx_kernel* kernel, ampx_kernel_report* out) {
          return guard([&] {
            if (!kernel || !out) invalid("kernel_report: NULL argument");
            const auto& k = *reinterpret_cast<const KernelHandle<Impl>*>(kernel);
            const KernelReport r = k.kernel->report();
            ampx_kernel_report rep{};
            copy_cstr(rep.implementation, r.implementation);
            rep.reorders = r.reorders;
            rep.reorder_us = r.reorder_us;
            rep.casts = r.casts;
            rep.cast_us = r.cast_us;
            write_out_struct(out, rep);
          });
        }};
    return &ext.base;
  } else {
    return next;
  }
}

// The native-handles extension (ABI 1.6): Impl's devices' native ordinal
// and stream, its buffers' device addresses.
template <class Impl>
const ampx_extension* native_handles_extension(const ampx_extension* next) noexcept {
  if constexpr (HasNativeHandles<Impl>) {
    static const ampx_native_handles_extension ext{
        {sizeof(ampx_native_handles_extension), AMPX_EXTENSION_NATIVE_HANDLES, next},
        [](ampx_plugin* p, int32_t device, ampx_native_device* out) {
          return guard([&] {
            Impl& impl = plugin_of<Impl>(p, "native_device");
            if (!out) invalid("native_device: NULL out");
            check_device(impl, device, "native_device");
            ampx_native_device d = impl.native_device(device);
            d.struct_size = sizeof d;
            write_out_struct(out, d);
          });
        },
        [](ampx_buffer* b, void** out) {
          if (out) *out = nullptr;
          return guard([&] {
            if (!b || !out) invalid("buffer_native_ptr: NULL argument");
            BufferHandle<Impl>* h = buffer_of<Impl>(b);
            *out = h->owner->native_ptr(h->buffer);
            if (!*out) throw StatusError(AMPX_STATUS_UNSUPPORTED, "buffer_native_ptr: no address");
          });
        }};
    return &ext.base;
  } else {
    return next;
  }
}

// The options extension for Impl::kOptions: static, built once.
template <class Impl>
const ampx_extension* options_extension() noexcept {
  static const std::vector<ampx_option_desc> descs = [] {
    std::vector<ampx_option_desc> d;
    for (const OptionSpec& o : std::span<const OptionSpec>(Impl::kOptions))
      d.push_back({sizeof(ampx_option_desc), o.key, o.values, o.doc});
    return d;
  }();
  static const ampx_options_extension ext{
      {sizeof(ampx_options_extension), AMPX_EXTENSION_OPTIONS, nullptr},
      descs.size(),
      descs.empty() ? nullptr : descs.data()};
  return &ext.base;
}

}  // namespace glue_detail

// The complete function table for Impl (see the requirements at the top).
template <class Impl>
ampx_plugin_api make_table() noexcept {
  using namespace glue_detail;
  using BH = BufferHandle<Impl>;
  using KH = KernelHandle<Impl>;
  using V = View<typename Impl::Buffer>;
  ampx_plugin_api api{};
  api.struct_size = sizeof api;
  api.abi_major = AMPX_ABI_VERSION_MAJOR;
  api.abi_minor = AMPX_ABI_VERSION_MINOR;
  api.plugin_name = Impl::kName;
  api.plugin_version = Impl::kVersion;
  api.status_code = status_code;
  api.status_message = status_message;
  api.status_destroy = status_destroy;

  api.plugin_create = [](const ampx_plugin_create_args* args, ampx_plugin** out) {
    return guard([&] {
      if (!out) invalid("plugin_create: NULL out");
      *out = nullptr;
      const PluginOptions options(Impl::kName, args, std::span<const OptionSpec>(Impl::kOptions));
      auto impl = std::make_unique<Impl>(options);
      live_handles<Impl>("plugin instance").add(impl.get());
      *out = reinterpret_cast<ampx_plugin*>(impl.release());
    });
  };
  api.plugin_destroy = [](ampx_plugin* p) {
    if (p && live_handles<Impl>("plugin instance").remove(p)) delete reinterpret_cast<Impl*>(p);
  };
  api.plugin_info = [](ampx_plugin* p, ampx_plugin_info* out) {
    return guard([&] {
      const Impl& impl = plugin_of<Impl>(p, "plugin_info");
      if (!out) invalid("plugin_info: NULL out");
      ampx_plugin_info info{};
      copy_cstr(info.note, impl.note());
      copy_cstr(info.library, impl.library());
      write_out_struct(out, info);
    });
  };
  api.device_count = [](ampx_plugin* p, int32_t* out) {
    return guard([&] {
      const Impl& impl = plugin_of<Impl>(p, "device_count");
      if (!out) invalid("device_count: NULL out");
      *out = impl.device_count();
    });
  };
  api.device_props = [](ampx_plugin* p, int32_t device, ampx_device_props* out) {
    return guard([&] {
      const Impl& impl = plugin_of<Impl>(p, "device_props");
      if (!out) invalid("device_props: NULL out");
      check_device(impl, device, "device_props");
      write_out_struct(out, impl.device_props(device));
    });
  };
  api.query_capability = [](ampx_plugin* p, int32_t device, const ampx_node_desc* node,
                            ampx_capability* out) {
    return guard([&] {
      const Impl& impl = plugin_of<Impl>(p, "query_capability");
      if (!node || !out) invalid("query_capability: NULL argument");
      check_device(impl, device, "query_capability");
      const NodeView v(*node);
      const Capability a = impl.capability(device, v);
      ampx_capability cap{};
      cap.support = a.support;
      cap.cost_us = a.cost_us;
      copy_cstr(cap.note, a.note);
      write_out_struct(out, cap);
    });
  };

  api.buffer_alloc = [](ampx_plugin* p, int32_t device, uint64_t bytes, ampx_buffer** out) {
    if (out) *out = nullptr;  // first: a failed call leaves it NULL, whatever fails
    return guard([&] {
      Impl& impl = plugin_of<Impl>(p, "buffer_alloc");
      if (!out) invalid("buffer_alloc: NULL out");
      check_device(impl, device, "buffer_alloc");
      auto h = std::make_unique<BH>(BH{&impl, device, bytes, impl.alloc(device, bytes)});
      live_handles<BH>("buffer").add(h.get());
      *out = reinterpret_cast<ampx_buffer*>(h.release());
    });
  };
  api.buffer_free = [](ampx_buffer* b) {
    if (!b || !live_handles<BH>("buffer").remove(b)) return;
    BH* h = buffer_of<Impl>(b);
    if constexpr (HasRelease<Impl>) h->owner->release(h->buffer);
    delete h;
  };
  api.copy_to_device = [](ampx_buffer* dst, uint64_t dst_offset, const void* src, uint64_t bytes) {
    return guard([&] {
      if (!dst || (!src && bytes)) invalid("copy_to_device: NULL argument");
      BH* d = buffer_of<Impl>(dst);
      check_range("copy_to_device", d->size, dst_offset, bytes);
      if (bytes) d->owner->write(d->buffer, dst_offset, src, bytes);
    });
  };
  api.copy_to_host = [](void* dst, const ampx_buffer* src, uint64_t src_offset, uint64_t bytes) {
    return guard([&] {
      if (!src || (!dst && bytes)) invalid("copy_to_host: NULL argument");
      BH* s = buffer_of<Impl>(src);
      check_range("copy_to_host", s->size, src_offset, bytes);
      if (bytes) s->owner->read(dst, s->buffer, src_offset, bytes);
    });
  };
  api.copy_device_to_device = [](ampx_buffer* dst, uint64_t dst_offset, const ampx_buffer* src,
                                 uint64_t src_offset, uint64_t bytes) {
    return guard([&] {
      if (!dst || !src) invalid("copy_device_to_device: NULL argument");
      BH* d = buffer_of<Impl>(dst);
      BH* s = buffer_of<Impl>(src);
      if (d->owner != s->owner)
        invalid("copy_device_to_device: the buffers belong to two instances of the plugin");
      check_range("copy_device_to_device (destination)", d->size, dst_offset, bytes);
      check_range("copy_device_to_device (source)", s->size, src_offset, bytes);
      using Ref = BufferRef<typename Impl::Buffer>;
      if (bytes)
        d->owner->copy(Ref{d->buffer, d->device, dst_offset}, Ref{s->buffer, s->device, src_offset},
                       bytes);
    });
  };

  api.kernel_prepare = [](ampx_plugin* p, int32_t device, const ampx_node_desc* node,
                          ampx_kernel** out) {
    if (out) *out = nullptr;  // first: a failed call leaves it NULL, whatever fails
    return guard([&] {
      Impl& impl = plugin_of<Impl>(p, "kernel_prepare");
      if (!node || !out) invalid("kernel_prepare: NULL argument");
      check_device(impl, device, "kernel_prepare");
      const NodeView v(*node);
      auto h = std::make_unique<KH>(KH{&impl, device, KernelSignature::of(v), nullptr, {}, {}});
      h->kernel = with_node(v.where(), [&] { return impl.prepare(device, v); });
      if (!h->kernel) invalid("kernel_prepare: " + v.where() + ": no kernel");
      live_handles<KH>("kernel").add(h.get());
      *out = reinterpret_cast<ampx_kernel*>(h.release());
    });
  };
  api.kernel_launch = [](ampx_kernel* kernel, const ampx_buffer_view* inputs, size_t num_inputs,
                         const ampx_buffer_view* outputs, size_t num_outputs) {
    return guard([&] {
      KH& k = checked_launch<Impl>(kernel, inputs, num_inputs, outputs, num_outputs);
      with_node(k.signature.where,
                [&] { k.kernel->launch(std::span<const V>(k.ins), std::span<const V>(k.outs)); });
    });
  };
  api.kernel_destroy = [](ampx_kernel* kernel) {
    if (kernel && live_handles<KH>("kernel").remove(kernel)) delete reinterpret_cast<KH*>(kernel);
  };
  api.synchronize = [](ampx_plugin* p, int32_t device) {
    return guard([&] {
      Impl& impl = plugin_of<Impl>(p, "synchronize");
      check_device(impl, device, "synchronize");
      impl.synchronize(device);
    });
  };

  if constexpr (HasHostPtr<Impl>) {
    api.buffer_host_ptr = [](ampx_buffer* b) -> void* {
      if (!b) return nullptr;
      BH* h = buffer_of<Impl>(b);
      return h->owner->host_ptr(h->buffer);
    };
  }
  if constexpr (HasTimedLaunch<Impl>) {
    api.kernel_launch_timed = [](ampx_kernel* kernel, const ampx_buffer_view* inputs,
                                 size_t num_inputs, const ampx_buffer_view* outputs,
                                 size_t num_outputs, double* out_device_us) {
      return guard([&] {
        if (!out_device_us) invalid("kernel_launch_timed: NULL out");
        KH& k = checked_launch<Impl>(kernel, inputs, num_inputs, outputs, num_outputs);
        *out_device_us = with_node(k.signature.where, [&] {
          return k.kernel->launch_timed(std::span<const V>(k.ins), std::span<const V>(k.outs));
        });
      });
    };
  }
  api.extensions = native_handles_extension<Impl>(
      kernel_info_extension<Impl>(numerics_extension<Impl>(options_extension<Impl>())));
  return api;
}

// What a plugin's ampx_plugin_entry() returns: one static table for Impl.
template <class Impl>
const ampx_plugin_api* plugin_entry() noexcept {
  static const ampx_plugin_api api = make_table<Impl>();
  return &api;
}

}  // namespace ampx::plugin_support
