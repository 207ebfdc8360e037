#include "cudnn_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "ampx/plugin_support.hpp"

namespace ampx::cuda {

CudnnLibrary::CudnnLibrary(bool enabled) {
  if (!enabled) {
    description_ = "cuDNN not loaded: disabled by option cudnn=off";
    return;
  }
  std::vector<std::string> names;
  if (const char* env = std::getenv("AMPX_CUDNN_LIBRARY"); env && *env) names.emplace_back(env);
  names.insert(names.end(), {"libcudnn.so.9", "libcudnn.so"});
  std::string errors;
  for (const std::string& n : names) {
    handle_ = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) break;
    const char* e = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(e ? e : n);
  }
  if (!handle_) {
    description_ = "cuDNN not loaded: " + errors;
    return;
  }
  // Resolve every function or none: a partial table is no table.
  bool ok = true;
  std::string missing;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle_, name));
    if (!fn) {
      ok = false;
      missing += (missing.empty() ? "" : ", ") + std::string(name);
    }
  };
#define AMPX_CUDNN_SYM(name) sym(name, #name)
  AMPX_CUDNN_SYM(cudnnGetVersion);
  AMPX_CUDNN_SYM(cudnnGetErrorString);
  AMPX_CUDNN_SYM(cudnnCreate);
  AMPX_CUDNN_SYM(cudnnDestroy);
  AMPX_CUDNN_SYM(cudnnSetStream);
  AMPX_CUDNN_SYM(cudnnCreateTensorDescriptor);
  AMPX_CUDNN_SYM(cudnnSetTensor4dDescriptor);
  AMPX_CUDNN_SYM(cudnnDestroyTensorDescriptor);
  AMPX_CUDNN_SYM(cudnnCreateFilterDescriptor);
  AMPX_CUDNN_SYM(cudnnSetFilter4dDescriptor);
  AMPX_CUDNN_SYM(cudnnDestroyFilterDescriptor);
  AMPX_CUDNN_SYM(cudnnCreateConvolutionDescriptor);
  AMPX_CUDNN_SYM(cudnnSetConvolution2dDescriptor);
  AMPX_CUDNN_SYM(cudnnSetConvolutionGroupCount);
  AMPX_CUDNN_SYM(cudnnSetConvolutionMathType);
  AMPX_CUDNN_SYM(cudnnDestroyConvolutionDescriptor);
  AMPX_CUDNN_SYM(cudnnCreateActivationDescriptor);
  AMPX_CUDNN_SYM(cudnnSetActivationDescriptor);
  AMPX_CUDNN_SYM(cudnnDestroyActivationDescriptor);
  AMPX_CUDNN_SYM(cudnnGetConvolutionForwardAlgorithm_v7);
  AMPX_CUDNN_SYM(cudnnGetConvolutionForwardWorkspaceSize);
  AMPX_CUDNN_SYM(cudnnConvolutionForward);
  AMPX_CUDNN_SYM(cudnnConvolutionBiasActivationForward);
  AMPX_CUDNN_SYM(cudnnGetConvolutionBackwardFilterAlgorithm_v7);
  AMPX_CUDNN_SYM(cudnnGetConvolutionBackwardFilterWorkspaceSize);
  AMPX_CUDNN_SYM(cudnnConvolutionBackwardFilter);
#undef AMPX_CUDNN_SYM
  if (!ok) {
    description_ = "cuDNN not loaded: missing " + missing;
    dlclose(handle_);
    handle_ = nullptr;
    return;
  }
  // cudnnGetVersion: major*10000 + minor*100 + patch from cuDNN 9 on.
  const size_t v = cudnnGetVersion();
  if (v / 10000 != CUDNN_MAJOR) {
    description_ = "cuDNN not loaded: version " + std::to_string(v) + ", built against " +
                   std::to_string(CUDNN_MAJOR) + ".x";
    dlclose(handle_);
    handle_ = nullptr;
    return;
  }
  version_ = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
             std::to_string(v % 100);
  description_ = "cuDNN " + version_;
}

CudnnLibrary::~CudnnLibrary() {
  if (handle_) dlclose(handle_);
}

void CudnnLibrary::check(cudnnStatus_t s, const std::string& what) const {
  if (s == CUDNN_STATUS_SUCCESS) return;
  // cuDNN 9 groups its codes by thousands: 2xxx bad parameter, 3xxx not
  // supported, 4xxx internal (allocation failures among them), 5xxx execution.
  const int c = static_cast<int>(s);
  const ampx_status_code code = (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                                 s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
                                    ? AMPX_STATUS_OUT_OF_MEMORY
                                : c / 1000 == 3 ? AMPX_STATUS_UNSUPPORTED
                                : c / 1000 == 2 ? AMPX_STATUS_INVALID_ARGUMENT
                                                : AMPX_STATUS_INTERNAL;
  throw plugin_support::StatusError(
      code, what + ": " + (cudnnGetErrorString ? cudnnGetErrorString(s) : "cuDNN error") + " (" +
                std::to_string(static_cast<int>(s)) + ")");
}

}  // namespace ampx::cuda
