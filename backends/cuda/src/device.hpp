// The plugin's view of the machine: which CUDA devices there are (or why
// there are none), their properties, and per device the execution context
// created on first use: one stream, the cuBLASLt handle and workspace, the
// cuDNN handle, the caching allocator.
#pragma once

#include <cudnn.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator.hpp"
#include "ampx/backend_api.h"
#include "ampx/plugin_glue.hpp"
#include "cudnn_library.hpp"
#include "handles.hpp"

namespace ampx::cuda {

struct DeviceInfo {
  int index = 0;
  int cc_major = 0, cc_minor = 0;  // compute capability
  // Empty when this build's kernels run on the device; otherwise why not
  // (cudaErrorNoKernelImageForDevice for an architecture not compiled in).
  std::string kernel_image_error;
  ampx_device_props props{};
  int cc() const noexcept { return cc_major * 10 + cc_minor; }
};

struct PluginOptions {
  bool cudnn = true;  // cudnn=off: never load cuDNN (tests the fallback)
};
// The documented keys (the AMPX_EXTENSION_OPTIONS extension and README.md).
inline constexpr plugin_support::OptionSpec kOptions[] = {
    {"cudnn", "on|off", "off: never load cuDNN (tests the fallback)"},
    {"threads", "0..4096", "accepted and ignored (kernels run on the GPU)"}};
// "cudnn=on|off"; throws std::invalid_argument naming the bad value.
PluginOptions parse_options(const plugin_support::PluginOptions& options);
// The same from an options string ("key=value;..."), for tests.
PluginOptions parse_options(const char* options);

class DeviceContext {
 public:
  DeviceContext(int index, const CudnnLibrary& cudnn);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int index() const noexcept { return index_; }
  // cudaSetDevice(index): every entry point that touches the device calls it
  // first (the host thread may have used another device since).
  void activate() const;
  cudaStream_t stream() const noexcept { return stream_.get(); }
  cublasLtHandle_t lt() const noexcept { return lt_.get(); }
  void* lt_workspace() const noexcept { return lt_workspace_.get(); }
  size_t lt_workspace_bytes() const noexcept { return lt_workspace_.capacity(); }
  CachingAllocator& allocator() noexcept { return *allocator_; }
  // The cuDNN handle bound to stream(), created on first use; NULL when cuDNN
  // is not loaded.
  cudnnHandle_t cudnn();
  const CudnnLibrary& cudnn_library() const noexcept { return cudnn_lib_; }

  // Waits for the stream. An asynchronous error is reported with the node
  // launched last, the only hint of where it came from.
  void synchronize();
  void set_last_node(const std::string& where) { last_node_ = where; }

 private:
  int index_;
  const CudnnLibrary& cudnn_lib_;
  // Declaration order is destruction order reversed: the allocator (and the
  // workspace it hands out) outlive the handles that may still use them.
  std::unique_ptr<CachingAllocator> allocator_;
  DeviceMemory lt_workspace_;
  UniqueStream stream_;
  UniqueLtHandle lt_;
  cudnnHandle_t cudnn_ = nullptr;
  std::string last_node_;
};

class Runtime {
 public:
  explicit Runtime(const PluginOptions& opts);
  ~Runtime();

  int device_count() const noexcept { return static_cast<int>(devices_.size()); }
  // plugin_info.note: why there are no devices, or what the devices run with.
  const std::string& note() const noexcept { return note_; }
  // plugin_info.library: "CUDA runtime 13.0, cuBLASLt 130001, cuDNN 9.19.0".
  const std::string& library() const noexcept { return library_; }
  // Throws INVALID_ARGUMENT for an index out of range.
  const DeviceInfo& info(int device) const;
  // The context of `device`, created on first use, and made current.
  DeviceContext& context(int device);
  const CudnnLibrary& cudnn() const noexcept { return *cudnn_; }

 private:
  std::unique_ptr<CudnnLibrary> cudnn_;  // outlives the contexts' cuDNN handles
  std::vector<DeviceInfo> devices_;
  std::vector<std::unique_ptr<DeviceContext>> contexts_;
  std::string note_, library_;
};

}  // namespace ampx::cuda
