#include "device.hpp"

#include <cuda_runtime_api.h>

#include <fstream>
#include <stdexcept>

#include "ampx/plugin_support.hpp"
#include "cuda_error.hpp"
#include "kernels.hpp"

namespace ampx::cuda {

namespace ps = ampx::plugin_support;

namespace {

constexpr const char* kPluginVersion = "0.1.0";
constexpr size_t kLtWorkspaceBytes = 32u << 20;  // cuBLAS' recommendation for Hopper

std::string cuda_version(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// The kernel driver release ("580.65.06") from /proc, empty when unknown.
std::string driver_release() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return {};
  const size_t k = line.find("Kernel Module");
  if (k == std::string::npos) return {};
  std::string rest = line.substr(k + 13);
  rest.erase(0, rest.find_first_not_of(" \t"));
  return rest.substr(0, rest.find_first_of(" \t"));
}

std::string token(const std::string& s) {  // [A-Za-z0-9.-], other runs -> '_'
  std::string r;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-';
    if (ok)
      r += c;
    else if (!r.empty() && r.back() != '_')
      r += '_';
  }
  while (!r.empty() && r.back() == '_') r.pop_back();
  return r.empty() ? "unknown" : r;
}

}  // namespace

PluginOptions parse_options(const ps::PluginOptions& options) {
  PluginOptions o;
  o.cudnn = options.choice("cudnn", "on", {"on", "off"}) == "on";
  options.integer("threads", 0, 0, 4096);  // host threads do not apply
  return o;
}

PluginOptions parse_options(const char* options) {
  ampx_plugin_create_args args{};
  args.struct_size = sizeof args;
  args.log_level = 6;
  args.options = options;
  return parse_options(ps::PluginOptions("cuda", &args, kOptions));
}

// ------------------------------------------------------------ DeviceContext

DeviceContext::DeviceContext(int index, const CudnnLibrary& cudnn)
    : index_(index), cudnn_lib_(cudnn) {
  activate();
  allocator_ = std::make_unique<CachingAllocator>(index);
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_.reset(s);
  cublasLtHandle_t h = nullptr;
  check_cublas(cublasLtCreate(&h), "cublasLtCreate");
  lt_.reset(h);
  lt_workspace_ = DeviceMemory(*allocator_, kLtWorkspaceBytes);
}

DeviceContext::~DeviceContext() {
  if (cudaSetDevice(index_) != cudaSuccess) return;
  (void)cudaStreamSynchronize(stream_.get());
  if (cudnn_) (void)cudnn_lib_.cudnnDestroy(cudnn_);
  lt_.reset();
  stream_.reset();
  lt_workspace_.reset();
}

void DeviceContext::activate() const {
  check_cuda(cudaSetDevice(index_), "cudaSetDevice(" + std::to_string(index_) + ")");
}

cudnnHandle_t DeviceContext::cudnn() {
  if (cudnn_ || !cudnn_lib_.loaded()) return cudnn_;
  cudnnHandle_t h = nullptr;
  cudnn_lib_.check(cudnn_lib_.cudnnCreate(&h), "cudnnCreate");
  const cudnnStatus_t s = cudnn_lib_.cudnnSetStream(h, stream());
  if (s != CUDNN_STATUS_SUCCESS) {
    (void)cudnn_lib_.cudnnDestroy(h);
    cudnn_lib_.check(s, "cudnnSetStream");
  }
  cudnn_ = h;
  return cudnn_;
}

void DeviceContext::synchronize() {
  activate();
  const cudaError_t e = cudaStreamSynchronize(stream());
  if (e != cudaSuccess) {
    throw_cuda(e, "device cuda:" + std::to_string(index_) + ": synchronize" +
                      (last_node_.empty() ? "" : " (last launched: " + last_node_ + ")"));
  }
}

// ------------------------------------------------------------------ Runtime

Runtime::Runtime(const PluginOptions& opts) : cudnn_(std::make_unique<CudnnLibrary>(opts.cudnn)) {
  int runtime = 0, driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);  // 0 when there is no driver
  library_ = "CUDA runtime " + cuda_version(runtime) + ", cuBLASLt " +
             std::to_string(cublasLtGetVersion()) + ", " +
             (cudnn_->loaded() ? cudnn_->description() : std::string("no cuDNN"));

  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    note_ = "no CUDA device: cudaGetDeviceCount: " + describe(e) + "; driver " +
            (driver ? cuda_version(driver) : std::string("none")) + ", runtime " +
            cuda_version(runtime);
    return;
  }
  const std::string release = driver_release();
  const std::string driver_str =
      (release.empty() ? std::string() : release + ", ") + "CUDA " + cuda_version(driver);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, i), "cudaGetDeviceProperties");
    DeviceInfo d;
    d.index = i;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    if (cudaSetDevice(i) == cudaSuccess) {
      const cudaError_t pe = kern::probe_kernel_image();
      if (pe != cudaSuccess) {
        (void)cudaGetLastError();
        d.kernel_image_error = describe(pe) + ": this build has code for " AMPX_CUDA_ARCHS_TEXT;
      }
    }
    ampx_device_props& p = d.props;
    p.struct_size = sizeof p;
    ps::copy_cstr(p.name, prop.name);
    ps::copy_cstr(p.vendor, "NVIDIA");
    ps::copy_cstr(p.driver_version, driver_str);
    // Same GPU model, architecture, driver and cuDNN => same answers.
    const std::string fp = "cuda/" + std::string(kPluginVersion) + "/" + token(prop.name) + "/sm_" +
                           std::to_string(d.cc()) + "/driver-" +
                           (release.empty() ? cuda_version(driver) : release) + "/runtime-" +
                           cuda_version(runtime) + "/cudnn-" + cudnn_->version();
    ps::copy_cstr(p.fingerprint, fp);
    p.memory_bytes = prop.totalGlobalMem;
    p.type = AMPX_DEVICE_GPU;
    p.compute_units = prop.multiProcessorCount;
    devices_.push_back(std::move(d));
  }
  contexts_.resize(devices_.size());
  note_ = std::to_string(count) + " device(s), " + cudnn_->description();
  if (count == 0) note_ = "no CUDA device (cudaGetDeviceCount returned 0)";
}

Runtime::~Runtime() {
  contexts_.clear();  // before cudnn_: their cuDNN handles use the library
}

const DeviceInfo& Runtime::info(int device) const {
  if (device < 0 || device >= device_count()) {
    throw ps::StatusError(AMPX_STATUS_INVALID_ARGUMENT,
                          "device index " + std::to_string(device) + " out of range (" +
                              std::to_string(device_count()) + " CUDA devices)");
  }
  return devices_[static_cast<size_t>(device)];
}

DeviceContext& Runtime::context(int device) {
  const DeviceInfo& d = info(device);
  if (!d.kernel_image_error.empty()) {
    throw ps::StatusError(AMPX_STATUS_UNAVAILABLE,
                          "device cuda:" + std::to_string(device) + ": " + d.kernel_image_error);
  }
  auto& c = contexts_[static_cast<size_t>(device)];
  if (!c) c = std::make_unique<DeviceContext>(device, *cudnn_);
  c->activate();
  return *c;
}

}  // namespace ampx::cuda
