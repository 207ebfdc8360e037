#include <dlfcn.h>
#include <ampx/nccl/nccl_loader.hpp>
#include <ampx/plugins/discovery.hpp>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

namespace ampx::nccl {
namespace {

struct Loaded {
  Module* module = nullptr;
  std::string why;
};

Loaded load() {
  Loaded out;
  const char* off = std::getenv("AMPX_NCCL");
  if (off != nullptr && std::string(off) == "off") {
    out.why = "AMPX_NCCL=off";
    return out;
  }
  std::vector<std::filesystem::path> candidates;
  if (const char* file = std::getenv("AMPX_NCCL_MODULE"); file != nullptr && *file != '\0')
    candidates.emplace_back(file);
  else
    for (const auto& dir : plugins::default_plugin_dirs())
      candidates.push_back((dir / ".." / "libampx_nccl.so").lexically_normal());
  std::string errors;
  for (const auto& path : candidates) {
    if (!std::filesystem::exists(path)) {
      errors += (errors.empty() ? "" : "; ") + path.string() + " does not exist";
      continue;
    }
    // Never closed: NCCL keeps threads and CUDA state for the process.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(e ? e : path.string());
      continue;
    }
    using Entry = Module* (*)(int);
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "ampx_nccl_module"));
    Module* m = entry ? entry(kNcclModuleVersion) : nullptr;
    if (m == nullptr) {
      errors += (errors.empty() ? "" : "; ") + path.string() + " belongs to another build";
      continue;
    }
    out.module = m;
    return out;
  }
  out.why = "the NCCL module was not loaded (" + errors + ")";
  return out;
}

}  // namespace

Module* nccl_module(std::string& why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  why = loaded.why;
  return loaded.module;
}

}  // namespace ampx::nccl
