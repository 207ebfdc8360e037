// The CUDA backend plugin (devices cuda:0..N-1): the SDK's glue
// (ampx/plugin_glue.hpp) over src/ (Runtime: devices and contexts; answer():
// capability; ops: kernels).
// Without a GPU or driver it loads, reports zero devices and says why in
// plugin_info.note. Options: "cudnn=on|off" (off: never load cuDNN).
//
// CUDA, cuBLASLt and cuDNN errors are thrown as StatusErrors carrying the
// library's error text; the glue adds the node ("node 'conv1' (Conv2d):
// cublasLtMatmul: ...").
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "allocator.hpp"
#include "ampx/backend_api.h"
#include "ampx/opset/catalogue.hpp"
#include "ampx/opset/validate.hpp"
#include "ampx/plugin_glue.hpp"
#include "capability.hpp"
#include "cuda_error.hpp"
#include "device.hpp"
#include "handles.hpp"
#include "ops.hpp"

namespace ps = ampx::plugin_support;
using ampx::cuda::DeviceContext;
using ampx::cuda::DeviceMemory;
using ampx::cuda::Runtime;
using ps::StatusError;

namespace {

using ampx::cuda::check_cuda;

// The glue's Impl (ampx/plugin_glue.hpp): devices, buffers and kernels.
class CudaPlugin {
 public:
  static constexpr const char* kName = "cuda";
  static constexpr const char* kVersion = "0.1.0";
  static constexpr std::span<const ps::OptionSpec> kOptions = ampx::cuda::kOptions;

  struct Buffer {
    int device = 0;
    DeviceMemory mem;
    unsigned char* data() const noexcept { return static_cast<unsigned char*>(mem.get()); }
  };
  using View = ps::View<Buffer>;

  class Kernel {
   public:
    Kernel(Runtime& rt, int device, std::string where, std::unique_ptr<ampx::cuda::CudaOp> op)
        : rt_(rt), device_(device), where_(std::move(where)), op_(std::move(op)) {}

    void launch(std::span<const View> ins, std::span<const View> outs) {
      DeviceContext& ctx = rt_.context(device_);
      ctx.set_last_node(where_);
      const auto ptr = [](const View& v) { return v.buffer->data() + v.offset; };
      const auto address = [&](const View& v) { return reinterpret_cast<uintptr_t>(ptr(v)); };
      // Kernels want element-aligned pointers and outputs apart from the
      // inputs; anything else goes through scratch blocks (512-byte aligned)
      // that return to the cache afterwards: the stream orders their reuse.
      const ps::Staging staged = ps::plan_staging(ins, outs, address);
      std::vector<DeviceMemory> scratch;
      std::vector<const void*> in(ins.size());
      std::vector<void*> out(outs.size());
      for (size_t i = 0; i < ins.size(); ++i) {
        in[i] = ptr(ins[i]);
        if (!staged.input[i]) continue;
        scratch.emplace_back(ctx.allocator(), ins[i].bytes);
        check_cuda(cudaMemcpyAsync(scratch.back().get(), in[i], ins[i].bytes,
                                   cudaMemcpyDeviceToDevice, ctx.stream()),
                   "cudaMemcpyAsync (staging)");
        in[i] = scratch.back().get();
      }
      for (size_t i = 0; i < outs.size(); ++i) {
        out[i] = ptr(outs[i]);
        if (!staged.output[i]) continue;
        scratch.emplace_back(ctx.allocator(), outs[i].bytes);
        out[i] = scratch.back().get();
      }
      op_->launch(in, out);
      for (size_t i = 0; i < outs.size(); ++i) {
        if (staged.output[i] && outs[i].bytes)
          check_cuda(cudaMemcpyAsync(ptr(outs[i]), out[i], outs[i].bytes, cudaMemcpyDeviceToDevice,
                                     ctx.stream()),
                     "cudaMemcpyAsync (staging)");
      }
    }

    // ABI 1.1: the kernel between two events on its stream (earlier work
    // waited for first, so only this launch is between them).
    double launch_timed(std::span<const View> ins, std::span<const View> outs) {
      DeviceContext& ctx = rt_.context(device_);
      ctx.synchronize();
      const auto make_event = [] {
        cudaEvent_t e = nullptr;
        check_cuda(cudaEventCreate(&e), "cudaEventCreate");
        return ampx::cuda::UniqueEvent(e);
      };
      const ampx::cuda::UniqueEvent begin = make_event(), end = make_event();
      check_cuda(cudaEventRecord(begin.get(), ctx.stream()), "cudaEventRecord");
      launch(ins, outs);
      check_cuda(cudaEventRecord(end.get(), ctx.stream()), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(end.get()), "cudaEventSynchronize");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, begin.get(), end.get()), "cudaEventElapsedTime");
      return static_cast<double>(ms) * 1000.0;
    }

   private:
    Runtime& rt_;
    int device_;
    std::string where_;
    std::unique_ptr<ampx::cuda::CudaOp> op_;
  };

  explicit CudaPlugin(const ps::PluginOptions& options) : rt_(ampx::cuda::parse_options(options)) {}

  std::string note() const { return rt_.note(); }
  std::string library() const { return rt_.library(); }
  int32_t device_count() const { return rt_.device_count(); }
  ampx_device_props device_props(int32_t device) const { return rt_.info(device).props; }

  ps::Capability capability(int32_t device, const ps::NodeView& v) const {
    const ampx::cuda::Answer a = ampx::cuda::answer(v.desc(), rt_.info(device), rt_.cudnn());
    return {a.support, a.cost_us, a.note};
  }

  Buffer alloc(int32_t device, uint64_t bytes) {
    DeviceContext& ctx = rt_.context(device);
    return Buffer{device, DeviceMemory(ctx.allocator(), bytes)};
  }

  // Host memory is pageable and only borrowed for the call: each copy waits
  // until it is done.
  void write(Buffer& dst, uint64_t offset, const void* src, uint64_t bytes) {
    DeviceContext& ctx = rt_.context(dst.device);
    check_cuda(
        cudaMemcpyAsync(dst.data() + offset, src, bytes, cudaMemcpyHostToDevice, ctx.stream()),
        "copy_to_device: cudaMemcpyAsync");
    ctx.synchronize();
  }

  void read(void* dst, const Buffer& src, uint64_t offset, uint64_t bytes) {
    DeviceContext& ctx = rt_.context(src.device);
    check_cuda(
        cudaMemcpyAsync(dst, src.data() + offset, bytes, cudaMemcpyDeviceToHost, ctx.stream()),
        "copy_to_host: cudaMemcpyAsync");
    ctx.synchronize();
  }

  void copy(ps::BufferRef<Buffer> dst, ps::BufferRef<Buffer> src, uint64_t bytes) {
    unsigned char* d = dst.buffer.data() + dst.offset;
    const unsigned char* s = src.buffer.data() + src.offset;
    if (src.device != dst.device) {
      // The source device's queued writes must land first.
      rt_.context(src.device).synchronize();
      DeviceContext& ctx = rt_.context(dst.device);
      check_cuda(cudaMemcpyPeerAsync(d, dst.device, s, src.device, bytes, ctx.stream()),
                 "copy_device_to_device: cudaMemcpyPeerAsync");
      // The ABI's ordering rule: once this returns, later work on the
      // source device may overwrite the source range (the executor reuses
      // it at once), but the copy is queued on the destination's stream.
      // Waiting for it here keeps the source intact until it has been read.
      ctx.synchronize();
      return;
    }
    DeviceContext& ctx = rt_.context(dst.device);
    check_cuda(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, ctx.stream()),
               "copy_device_to_device: cudaMemcpyAsync");
  }

  std::unique_ptr<Kernel> prepare(int32_t device, const ps::NodeView& v) {
    const ampx::cuda::DeviceInfo& info = rt_.info(device);
    // Malformed nodes: the op set's validation message, as INVALID_ARGUMENT.
    std::string why;
    if (!ampx::opset::is_valid(v.desc(), &why)) {
      const bool unknown = ampx::cuda::find_op(v.op_type()) == nullptr;
      throw StatusError(unknown ? AMPX_STATUS_UNSUPPORTED : AMPX_STATUS_INVALID_ARGUMENT, why);
    }
    const ampx::cuda::Answer a = ampx::cuda::answer(v.desc(), info, rt_.cudnn());
    if (a.support == AMPX_SUPPORT_UNSUPPORTED) throw StatusError(AMPX_STATUS_UNSUPPORTED, a.note);
    DeviceContext& ctx = rt_.context(device);
    ampx::cuda::OpContext c(v, ctx, info);
    return std::make_unique<Kernel>(rt_, device, v.where(),
                                    ampx::cuda::find_op(v.op_type())->make(c));
  }

  void synchronize(int32_t device) { rt_.context(device).synchronize(); }
  // No host_ptr: device memory is not host-visible.

  // ABI 1.6 native handles: every launch and copy above goes to the
  // context's one stream, so work the host enqueues there (NCCL's
  // all-reduce) is in the device's order.
  ampx_native_device native_device(int32_t device) {
    DeviceContext& ctx = rt_.context(device);
    ampx_native_device d{};
    d.api = AMPX_NATIVE_API_CUDA;
    d.ordinal = ctx.index();
    d.stream = ctx.stream();
    return d;
  }
  void* native_ptr(Buffer& b) { return b.data(); }

 private:
  Runtime rt_;
};

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return ps::plugin_entry<CudaPlugin>();
}
