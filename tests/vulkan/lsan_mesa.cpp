// LeakSanitizer and Mesa's Vulkan driver (ASan builds only). lavapipe keeps
// a few small allocations per instance until exit; the loader dlclose()s the
// ICD at vkDestroyInstance, so LSan can no longer name the module ("unknown
// module") and no suppression by library could match. Keeping the ICD
// mapped (RTLD_NODELETE) restores the names; the suppressions name Mesa's
// libraries only, never ampx code.
#include <dlfcn.h>

#include <initializer_list>

namespace {
[[maybe_unused]] const bool kPinned = [] {
  for (const char* lib : {"libvulkan_lvp.so", "libvulkan.so.1"})
    dlopen(lib, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  return true;
}();
}  // namespace

extern "C" __attribute__((visibility("default"))) const char* __lsan_default_suppressions() {
  return "leak:libvulkan_lvp.so\nleak:libLLVM-15.so\nleak:libVkLayer_khronos_validation.so\n";
}
