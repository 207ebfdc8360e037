// Header-only C++20 helpers for backend plugin authors. Nothing here is part of
// the C ABI: the host never includes this header and never sees the concrete
// `ampx_status` defined below. Each plugin gets its own copy (hidden
// visibility), which is what the ABI wants: a status is destroyed by the
// plugin that made it.
//
//   - ampx_status, make_status(), status_code/status_message/status_destroy:
//     the three status members of the function table, ready to use.
//   - guard(fn): runs fn and turns any C++ exception into an ampx_status*, so
//     no exception crosses the C boundary.
//   - NodeView: typed, struct_size-aware access to an ampx_node_desc (the
//     one writer of it is NodeDescBuilder, node_desc_builder.hpp).
//   - dtype_size/dtype_name/element_count/byte_size, copy_cstr.
//   - LiveHandles: the handles a plugin handed out, so that a second destroy
//     is ignored (backend_api.h, "Destroy and free functions").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ampx/backend_api.h"

// The concrete status object. Defined at global scope because the C ABI
// forward-declares `struct ampx_status` there.
struct ampx_status {
  ampx_status_code code;
  std::string message;
};

namespace ampx::plugin_support {

// ------------------------------------------------------------ live handles

// The handles of one kind a plugin handed out and has not seen destroyed.
// A destroy of a handle that is not live (destroyed before, and its address
// not handed out again) is the host's bug: the ABI asks a plugin to survive
// it, so the destroy function ignores it with one line on stderr instead of
// freeing memory twice. Costs a lock and a hash per create and destroy, never
// per launch.
class LiveHandles {
 public:
  explicit LiveHandles(const char* what) noexcept : what_(what) {}
  // Throws std::bad_alloc (the caller's create then fails cleanly).
  void add(const void* h) {
    const std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(h);
  }
  // True when `h` was live (the caller then destroys it).
  bool remove(const void* h) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (live_.erase(h) > 0) return true;
    std::fprintf(stderr, "[ampx plugin] %s %p is not live (destroyed twice?): ignored\n", what_, h);
    return false;
  }

 private:
  const char* what_;
  std::mutex mutex_;
  std::unordered_set<const void*> live_;
};

// What live_handles() gives: the registry, or none once it is destroyed.
class LiveHandlesRef {
 public:
  explicit LiveHandlesRef(LiveHandles* handles) noexcept : handles_(handles) {}
  void add(const void* h) {
    if (handles_ != nullptr) handles_->add(h);
  }
  // With no registry left every destroy is taken as the first.
  bool remove(const void* h) noexcept { return handles_ == nullptr || handles_->remove(h); }

 private:
  LiveHandles* handles_;
};

// One registry per kind of handle and plugin library (Tag: the handle type).
// A host may destroy its plugin objects during its own static destruction
// (a global Session), after this library's statics are gone: the registry
// then answers "none", and destroys go through untracked, rather than every
// handle being taken for a double destroy and leaked. The flag is trivially
// destructible, so it stays readable to the very end.
template <class Tag>
LiveHandlesRef live_handles(const char* what) {
  static bool destroyed = false;
  struct Registry {
    explicit Registry(const char* w) : handles(w) {}
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;
    ~Registry() { destroyed = true; }
    LiveHandles handles;
  };
  static Registry registry(what);
  return LiveHandlesRef(destroyed ? nullptr : &registry.handles);
}

// ---------------------------------------------------------------- statuses

// Returned when allocating a status itself fails: static, never deleted.
inline ampx_status* out_of_memory_status() noexcept {
  static ampx_status oom{AMPX_STATUS_OUT_OF_MEMORY, "out of memory"};
  return &oom;
}

// A new status for the host to release with status_destroy(). Never throws.
inline ampx_status* make_status(ampx_status_code code, std::string_view message) noexcept {
  try {
    auto s = std::make_unique<ampx_status>(ampx_status{code, std::string(message)});
    live_handles<ampx_status>("status").add(s.get());
    return s.release();
  } catch (...) {
    return out_of_memory_status();
  }
}

// The three status members of ampx_plugin_api. NULL means OK.
inline ampx_status_code status_code(const ampx_status* s) noexcept {
  return s ? s->code : AMPX_STATUS_OK;
}
inline const char* status_message(const ampx_status* s) noexcept {
  return s ? s->message.c_str() : "";
}
inline void status_destroy(ampx_status* s) noexcept {
  if (s == nullptr || s == out_of_memory_status()) return;
  if (live_handles<ampx_status>("status").remove(s)) delete s;
}

// Throw this to return a specific status code from inside guard().
class StatusError : public std::runtime_error {
 public:
  StatusError(ampx_status_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ampx_status_code code() const noexcept { return code_; }

 private:
  ampx_status_code code_;
};

// Runs `fn` (returning void or ampx_status*) and maps exceptions to statuses:
// StatusError -> its code, std::invalid_argument and std::out_of_range ->
// INVALID_ARGUMENT, std::bad_alloc -> OUT_OF_MEMORY, anything else -> INTERNAL.
// Wrap the body of every entry point in it:
//   return guard([&] { ... });
template <class Fn>
ampx_status* guard(Fn&& fn) noexcept {
  try {
    if constexpr (std::is_same_v<std::invoke_result_t<Fn>, void>) {
      std::forward<Fn>(fn)();
      return nullptr;
    } else {
      return std::forward<Fn>(fn)();
    }
  } catch (const StatusError& e) {
    return make_status(e.code(), e.what());
  } catch (const std::invalid_argument& e) {
    return make_status(AMPX_STATUS_INVALID_ARGUMENT, e.what());
  } catch (const std::out_of_range& e) {
    return make_status(AMPX_STATUS_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return make_status(AMPX_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return make_status(AMPX_STATUS_INTERNAL, e.what());
  } catch (...) {
    return make_status(AMPX_STATUS_INTERNAL, "unknown C++ exception");
  }
}

// ------------------------------------------------------------------ dtypes

// Bytes per element; 0 for AMPX_DTYPE_INVALID and unknown values.
inline size_t dtype_size(ampx_dtype dt) noexcept {
  switch (dt) {
    case AMPX_DTYPE_F64:
    case AMPX_DTYPE_I64:
    case AMPX_DTYPE_U64:
      return 8;
    case AMPX_DTYPE_F32:
    case AMPX_DTYPE_I32:
    case AMPX_DTYPE_U32:
      return 4;
    case AMPX_DTYPE_F16:
    case AMPX_DTYPE_BF16:
    case AMPX_DTYPE_I16:
    case AMPX_DTYPE_U16:
      return 2;
    case AMPX_DTYPE_BOOL:
    case AMPX_DTYPE_I8:
    case AMPX_DTYPE_U8:
      return 1;
    default:
      return 0;
  }
}

// "native", "emulated" or "unsupported" (anything else).
inline const char* support_name(ampx_support s) noexcept {
  switch (s) {
    case AMPX_SUPPORT_NATIVE:
      return "native";
    case AMPX_SUPPORT_EMULATED:
      return "emulated";
    default:
      return "unsupported";
  }
}

inline const char* dtype_name(ampx_dtype dt) noexcept {
  switch (dt) {
    case AMPX_DTYPE_F32:
      return "f32";
    case AMPX_DTYPE_F16:
      return "f16";
    case AMPX_DTYPE_BF16:
      return "bf16";
    case AMPX_DTYPE_F64:
      return "f64";
    case AMPX_DTYPE_I64:
      return "i64";
    case AMPX_DTYPE_I32:
      return "i32";
    case AMPX_DTYPE_BOOL:
      return "bool";
    case AMPX_DTYPE_I8:
      return "i8";
    case AMPX_DTYPE_U8:
      return "u8";
    case AMPX_DTYPE_I16:
      return "i16";
    case AMPX_DTYPE_U16:
      return "u16";
    case AMPX_DTYPE_U32:
      return "u32";
    case AMPX_DTYPE_U64:
      return "u64";
    default:
      return "invalid";
  }
}

inline bool is_float_dtype(ampx_dtype dt) noexcept {
  return dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_BF16 ||
         dt == AMPX_DTYPE_F64;
}
inline bool is_16bit_float(ampx_dtype dt) noexcept {
  return dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_BF16;
}
// The integer types (bool is not one): i8 to i64, u8 to u64.
inline bool is_integer_dtype(ampx_dtype dt) noexcept {
  return dt == AMPX_DTYPE_I64 || dt == AMPX_DTYPE_I32 || dt == AMPX_DTYPE_I16 ||
         dt == AMPX_DTYPE_I8 || dt == AMPX_DTYPE_U64 || dt == AMPX_DTYPE_U32 ||
         dt == AMPX_DTYPE_U16 || dt == AMPX_DTYPE_U8;
}
inline bool is_unsigned_dtype(ampx_dtype dt) noexcept {
  return dt == AMPX_DTYPE_U64 || dt == AMPX_DTYPE_U32 || dt == AMPX_DTYPE_U16 ||
         dt == AMPX_DTYPE_U8;
}

// ----------------------------------------------------------- struct_size

// True when `s` (whose first member is struct_size) holds `member` in full.
#define AMPX_HAS_MEMBER(s, Type, member) \
  ((s).struct_size >= offsetof(Type, member) + sizeof(((Type*)nullptr)->member))

// Hands a fully filled out-struct (ampx_plugin_info, ampx_device_props,
// ampx_capability) to the host. Normally writes all of T and sets
// struct_size = sizeof(T). If the host pre-set out->struct_size to a smaller
// value (an older host with a shorter struct), writes only that many bytes so
// its memory is never overrun.
template <class T>
void write_out_struct(T* out, T filled) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  const size_t host_size = out->struct_size;
  if (host_size > sizeof(size_t) && host_size < sizeof(T)) {
    filled.struct_size = host_size;
    std::memcpy(static_cast<void*>(out), &filled, host_size);
  } else {
    filled.struct_size = sizeof(T);
    *out = filled;
  }
}

// --------------------------------------------------------------- tensors

// Product of the dims; throws std::invalid_argument on a negative dim or an
// overflow of int64.
inline int64_t element_count(const int64_t* dims, int32_t rank) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t d = dims[i];
    if (d < 0) throw std::invalid_argument("negative dimension " + std::to_string(d));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      throw std::invalid_argument("tensor element count overflows int64");
    }
    n *= d;
  }
  return n;
}
inline int64_t element_count(const ampx_tensor_desc& t) {
  return element_count(t.dims, t.rank);
}

// Bytes of a dense tensor (element_count * dtype_size).
inline uint64_t byte_size(const ampx_tensor_desc& t) {
  const int64_t n = element_count(t);
  const uint64_t es = dtype_size(t.dtype);
  if (es != 0 && static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / es) {
    throw std::invalid_argument("tensor byte size overflows uint64");
  }
  return static_cast<uint64_t>(n) * es;
}

// ---------------------------------------------------------------- strings

// Copies `src` into a fixed char array, truncating, always NUL-terminated.
template <size_t N>
void copy_cstr(char (&dst)[N], std::string_view src) noexcept {
  static_assert(N > 0);
  const size_t n = src.size() < N - 1 ? src.size() : N - 1;
  if (n) std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// -------------------------------------------------------------- NodeView

// Read-only, struct_size-aware view of an ampx_node_desc. Arrays of tensors
// and attributes are walked with the stride the host declared in the first
// element's struct_size, so a newer host with bigger structs still works.
// Every error is a std::invalid_argument whose message starts with where(),
// e.g. "node 'conv1' (Conv2d): attribute 'group' is FLOAT, expected INT".
class NodeView {
 public:
  explicit NodeView(const ampx_node_desc& node) : node_(node) {
    if (!AMPX_HAS_MEMBER(node, ampx_node_desc, attrs)) {
      throw std::invalid_argument("node description: struct_size " +
                                  std::to_string(node.struct_size) + " is too small");
    }
    op_ = node.op_type ? node.op_type : "";
    name_ = node.name ? node.name : "";
    where_ = "node '" + std::string(name_) + "' (" + std::string(op_) + ")";
    if (op_.empty()) fail("op_type is empty");
    check_array(node.inputs, node.num_inputs, "inputs");
    check_array(node.outputs, node.num_outputs, "outputs");
    if (node.num_attrs > 0) {
      if (!node.attrs) fail("num_attrs > 0 but attrs is NULL");
      if (!AMPX_HAS_MEMBER(node.attrs[0], ampx_attr, s)) fail("attribute struct_size too small");
    }
    for (size_t i = 0; i < node.num_attrs; ++i) {
      if (!attr_at(i).name) fail("attribute " + std::to_string(i) + " has no name");
    }
  }

  const ampx_node_desc& desc() const noexcept { return node_; }
  std::string_view op_type() const noexcept { return op_; }
  std::string_view name() const noexcept { return name_; }
  // "node '<name>' (<op>)": the prefix of every message about this node.
  const std::string& where() const noexcept { return where_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(where_ + ": " + what);
  }

  size_t num_inputs() const noexcept { return node_.num_inputs; }
  size_t num_outputs() const noexcept { return node_.num_outputs; }
  const ampx_tensor_desc& input(size_t i) const {
    return tensor_at(node_.inputs, node_.num_inputs, i, "input");
  }
  const ampx_tensor_desc& output(size_t i) const {
    return tensor_at(node_.outputs, node_.num_outputs, i, "output");
  }
  // const_data of a tensor, or NULL when absent or beyond its struct_size.
  static const void* const_data(const ampx_tensor_desc& t) noexcept {
    return AMPX_HAS_MEMBER(t, ampx_tensor_desc, const_data) ? t.const_data : nullptr;
  }

  size_t num_attrs() const noexcept { return node_.num_attrs; }
  const ampx_attr& attr_at(size_t i) const {
    return *reinterpret_cast<const ampx_attr*>(reinterpret_cast<const char*>(node_.attrs) +
                                               i * node_.attrs[0].struct_size);
  }
  // The attribute named `name`, or NULL.
  const ampx_attr* find_attr(std::string_view name) const {
    for (size_t i = 0; i < node_.num_attrs; ++i) {
      const ampx_attr& a = attr_at(i);
      if (name == a.name) return &a;
    }
    return nullptr;
  }
  bool has_attr(std::string_view name) const { return find_attr(name) != nullptr; }

  int64_t get_int(std::string_view name, int64_t def) const {
    const ampx_attr* a = find_attr(name);
    if (!a) return def;
    expect_kind(*a, AMPX_ATTR_INT);
    return a->i;
  }
  // Accepts INT attributes too (converted).
  double get_float(std::string_view name, double def) const {
    const ampx_attr* a = find_attr(name);
    if (!a) return def;
    if (a->kind == AMPX_ATTR_INT) return static_cast<double>(a->i);
    expect_kind(*a, AMPX_ATTR_FLOAT);
    return a->f;
  }
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> def = {}) const {
    const ampx_attr* a = find_attr(name);
    if (!a) return def;
    expect_kind(*a, AMPX_ATTR_INTS);
    if (a->count > 0 && !a->ints) fail("attribute '" + std::string(name) + "' has no data");
    return std::vector<int64_t>(a->ints, a->ints + a->count);
  }
  std::vector<double> get_floats(std::string_view name, std::vector<double> def = {}) const {
    const ampx_attr* a = find_attr(name);
    if (!a) return def;
    expect_kind(*a, AMPX_ATTR_FLOATS);
    if (a->count > 0 && !a->floats) fail("attribute '" + std::string(name) + "' has no data");
    return std::vector<double>(a->floats, a->floats + a->count);
  }
  std::string get_string(std::string_view name, std::string def = {}) const {
    const ampx_attr* a = find_attr(name);
    if (!a) return def;
    expect_kind(*a, AMPX_ATTR_STRING);
    return a->s ? std::string(a->s) : std::string();
  }
  // For required attributes: fails with "missing required attribute 'x'".
  const ampx_attr& require_attr(std::string_view name) const {
    const ampx_attr* a = find_attr(name);
    if (!a) fail("missing required attribute '" + std::string(name) + "'");
    return *a;
  }

  static const char* attr_kind_name(ampx_attr_kind k) noexcept {
    switch (k) {
      case AMPX_ATTR_INT:
        return "INT";
      case AMPX_ATTR_FLOAT:
        return "FLOAT";
      case AMPX_ATTR_INTS:
        return "INTS";
      case AMPX_ATTR_FLOATS:
        return "FLOATS";
      case AMPX_ATTR_STRING:
        return "STRING";
      default:
        return "UNKNOWN";
    }
  }

 private:
  void check_array(const ampx_tensor_desc* arr, size_t n, const char* what) const {
    if (n == 0) return;
    if (!arr) fail(std::string(what) + " is NULL");
    if (!AMPX_HAS_MEMBER(arr[0], ampx_tensor_desc, dims)) {
      fail(std::string(what) + ": tensor struct_size too small");
    }
    for (size_t i = 0; i < n; ++i) {
      const ampx_tensor_desc& t = *reinterpret_cast<const ampx_tensor_desc*>(
          reinterpret_cast<const char*>(arr) + i * arr[0].struct_size);
      if (t.rank < 0) fail(std::string(what) + " " + std::to_string(i) + " has negative rank");
      if (t.rank > 0 && !t.dims) fail(std::string(what) + " " + std::to_string(i) + " has no dims");
    }
  }
  const ampx_tensor_desc& tensor_at(const ampx_tensor_desc* arr, size_t n, size_t i,
                                    const char* what) const {
    if (i >= n) fail(std::string(what) + " index " + std::to_string(i) + " out of range");
    return *reinterpret_cast<const ampx_tensor_desc*>(reinterpret_cast<const char*>(arr) +
                                                      i * arr[0].struct_size);
  }
  void expect_kind(const ampx_attr& a, ampx_attr_kind k) const {
    if (a.kind != k) {
      fail("attribute '" + std::string(a.name) + "' is " + attr_kind_name(a.kind) + ", expected " +
           attr_kind_name(k));
    }
  }

  const ampx_node_desc& node_;
  std::string_view op_, name_;
  std::string where_;
};

// ---------------------------------------------------------------- options

// The `options` string of ampx_plugin_create_args ("key=value;key=value",
// blanks around items ignored; NULL or empty: none) as (key, value) pairs in
// order. A key without '=' gets an empty value.
inline std::vector<std::pair<std::string, std::string>> split_options(const char* options) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view s = options ? std::string_view(options) : std::string_view();
  while (!s.empty()) {
    const size_t semi = s.find(';');
    std::string_view kv = s.substr(0, semi);
    s = semi == std::string_view::npos ? std::string_view() : s.substr(semi + 1);
    while (!kv.empty() && kv.front() == ' ') kv.remove_prefix(1);
    while (!kv.empty() && kv.back() == ' ') kv.remove_suffix(1);
    if (kv.empty()) continue;
    const size_t eq = kv.find('=');
    out.emplace_back(std::string(kv.substr(0, eq)),
                     std::string(eq == std::string_view::npos ? "" : kv.substr(eq + 1)));
  }
  return out;
}

// An integer option value in [lo, hi]; throws std::invalid_argument
// "<plugin> option <key>='<value>': expected an integer lo..hi".
inline long int_option(std::string_view plugin, const std::string& key, const std::string& value,
                       long lo, long hi) {
  char* end = nullptr;
  const long n = value.empty() ? 0 : std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n < lo || n > hi)
    throw std::invalid_argument(std::string(plugin) + " option " + key + "='" + value +
                                "': expected an integer " + std::to_string(lo) + ".." +
                                std::to_string(hi));
  return n;
}

}  // namespace ampx::plugin_support
