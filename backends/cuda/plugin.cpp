// The CUDA backend plugin (devices cuda:0..N-1): the C ABI v1 table over
// src/ (Runtime: devices and contexts; answer(): capability; ops: kernels).
// Without a GPU or driver it loads, reports zero devices and says why in
// plugin_info.note. Options: "cudnn=on|off" (off: never load cuDNN).
//
// Every entry point runs inside guard(): CUDA, cuBLASLt and cuDNN errors are
// thrown as StatusErrors carrying the library's error text, kernel errors
// also the node ("node 'conv1' (Conv2d): cublasLtMatmul: ...").
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "allocator.hpp"
#include "ampx/backend_api.h"
#include "ampx/cpu_ref/kernels.hpp"
#include "ampx/plugin_support.hpp"
#include "capability.hpp"
#include "cuda_error.hpp"
#include "device.hpp"
#include "handles.hpp"
#include "ops.hpp"

namespace ps = ampx::plugin_support;
using ampx::cuda::DeviceContext;
using ampx::cuda::DeviceMemory;
using ampx::cuda::Runtime;
using ps::guard;
using ps::StatusError;

struct ampx_plugin {
  std::unique_ptr<Runtime> rt;
};

struct ampx_buffer {
  Runtime* rt = nullptr;
  int device = 0;
  uint64_t size = 0;
  DeviceMemory mem;
};

struct ampx_kernel {
  Runtime* rt = nullptr;
  int device = 0;
  std::string where;  // "node 'x' (Op)"
  struct Slot {
    uint64_t bytes;
    size_t align;  // element size
  };
  std::vector<Slot> ins, outs;
  std::unique_ptr<ampx::cuda::CudaOp> op;
};

namespace {

constexpr const char* kVersion = "0.1.0";

[[noreturn]] void invalid(const std::string& what) {
  throw StatusError(AMPX_STATUS_INVALID_ARGUMENT, what);
}

ampx_status_code status_code(const ampx_status* s) {
  return ps::status_code(s);
}
const char* status_message(const ampx_status* s) {
  return ps::status_message(s);
}
void status_destroy(ampx_status* s) {
  ps::status_destroy(s);
}

ampx_status* plugin_create(const ampx_plugin_create_args* args, ampx_plugin** out) {
  return guard([&] {
    if (!out) invalid("plugin_create: NULL out");
    *out = nullptr;
    const char* options = nullptr;
    if (args && AMPX_HAS_MEMBER(*args, ampx_plugin_create_args, options)) options = args->options;
    auto p = std::make_unique<ampx_plugin>();
    p->rt = std::make_unique<Runtime>(ampx::cuda::parse_options(options));
    *out = p.release();
  });
}

void plugin_destroy(ampx_plugin* plugin) {
  delete plugin;
}

ampx_status* plugin_info(ampx_plugin* plugin, ampx_plugin_info* out) {
  return guard([&] {
    if (!plugin || !out) invalid("plugin_info: NULL argument");
    ampx_plugin_info info{};
    ps::copy_cstr(info.note, plugin->rt->note());
    ps::copy_cstr(info.library, plugin->rt->library());
    ps::write_out_struct(out, info);
  });
}

ampx_status* device_count(ampx_plugin* plugin, int32_t* out) {
  return guard([&] {
    if (!plugin || !out) invalid("device_count: NULL argument");
    *out = plugin->rt->device_count();
  });
}

ampx_status* device_props(ampx_plugin* plugin, int32_t device, ampx_device_props* out) {
  return guard([&] {
    if (!plugin || !out) invalid("device_props: NULL argument");
    ps::write_out_struct(out, plugin->rt->info(device).props);
  });
}

ampx_status* query_capability(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                              ampx_capability* out) {
  return guard([&] {
    if (!plugin || !node || !out) invalid("query_capability: NULL argument");
    const ampx::cuda::Answer a =
        ampx::cuda::answer(*node, plugin->rt->info(device), plugin->rt->cudnn());
    ampx_capability cap{};
    cap.support = a.support;
    cap.cost_us = a.cost_us;
    ps::copy_cstr(cap.note, a.note);
    ps::write_out_struct(out, cap);
  });
}

ampx_status* buffer_alloc(ampx_plugin* plugin, int32_t device, uint64_t bytes, ampx_buffer** out) {
  return guard([&] {
    if (!plugin || !out) invalid("buffer_alloc: NULL argument");
    *out = nullptr;
    DeviceContext& ctx = plugin->rt->context(device);
    auto buf = std::make_unique<ampx_buffer>();
    buf->rt = plugin->rt.get();
    buf->device = device;
    buf->size = bytes;
    buf->mem = DeviceMemory(ctx.allocator(), bytes);
    *out = buf.release();
  });
}

void buffer_free(ampx_buffer* buffer) {
  delete buffer;  // the block goes back to the device's cache
}

unsigned char* data(const ampx_buffer* b) {
  return static_cast<unsigned char*>(b->mem.get());
}

void check_range(const char* fn, uint64_t size, uint64_t offset, uint64_t bytes) {
  if (offset > size || bytes > size - offset) {
    invalid(std::string(fn) + ": range [" + std::to_string(offset) + ", " + std::to_string(offset) +
            " + " + std::to_string(bytes) + ") is outside the buffer of " + std::to_string(size) +
            " bytes");
  }
}

// Host memory is pageable and only borrowed for the call: each copy waits
// until it is done.
ampx_status* copy_to_device(ampx_buffer* dst, uint64_t dst_offset, const void* src,
                            uint64_t bytes) {
  return guard([&] {
    if (!dst || (!src && bytes)) invalid("copy_to_device: NULL argument");
    check_range("copy_to_device", dst->size, dst_offset, bytes);
    if (!bytes) return;
    DeviceContext& ctx = dst->rt->context(dst->device);
    ampx::cuda::check_cuda(
        cudaMemcpyAsync(data(dst) + dst_offset, src, bytes, cudaMemcpyHostToDevice, ctx.stream()),
        "copy_to_device: cudaMemcpyAsync");
    ctx.synchronize();
  });
}

ampx_status* copy_to_host(void* dst, const ampx_buffer* src, uint64_t src_offset, uint64_t bytes) {
  return guard([&] {
    if (!src || (!dst && bytes)) invalid("copy_to_host: NULL argument");
    check_range("copy_to_host", src->size, src_offset, bytes);
    if (!bytes) return;
    DeviceContext& ctx = src->rt->context(src->device);
    ampx::cuda::check_cuda(
        cudaMemcpyAsync(dst, data(src) + src_offset, bytes, cudaMemcpyDeviceToHost, ctx.stream()),
        "copy_to_host: cudaMemcpyAsync");
    ctx.synchronize();
  });
}

ampx_status* copy_device_to_device(ampx_buffer* dst, uint64_t dst_offset, const ampx_buffer* src,
                                   uint64_t src_offset, uint64_t bytes) {
  return guard([&] {
    if (!dst || !src) invalid("copy_device_to_device: NULL argument");
    check_range("copy_device_to_device (destination)", dst->size, dst_offset, bytes);
    check_range("copy_device_to_device (source)", src->size, src_offset, bytes);
    if (!bytes) return;
    if (src->device != dst->device) {
      // The source device's queued writes must land first.
      dst->rt->context(src->device).synchronize();
      DeviceContext& ctx = dst->rt->context(dst->device);
      ampx::cuda::check_cuda(
          cudaMemcpyPeerAsync(data(dst) + dst_offset, dst->device, data(src) + src_offset,
                              src->device, bytes, ctx.stream()),
          "copy_device_to_device: cudaMemcpyPeerAsync");
      // The ABI's ordering rule: once this returns, later work on the
      // source device may overwrite the source range (the executor reuses
      // it at once), but the copy is queued on the destination's stream.
      // Waiting for it here keeps the source intact until it has been read.
      ctx.synchronize();
      return;
    }
    DeviceContext& ctx = dst->rt->context(dst->device);
    ampx::cuda::check_cuda(cudaMemcpyAsync(data(dst) + dst_offset, data(src) + src_offset, bytes,
                                           cudaMemcpyDeviceToDevice, ctx.stream()),
                           "copy_device_to_device: cudaMemcpyAsync");
  });
}

// Prefixes errors from inside an op with the node: "node 'x' (Op): ...".
template <class Fn>
void for_node(const std::string& where, Fn&& fn) {
  try {
    fn();
  } catch (const StatusError& e) {
    throw StatusError(e.code(), where + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    throw StatusError(AMPX_STATUS_INVALID_ARGUMENT,
                      m.rfind("node '", 0) == 0 ? m : where + ": " + m);
  } catch (const std::bad_alloc&) {
    throw StatusError(AMPX_STATUS_OUT_OF_MEMORY, where + ": out of host memory");
  } catch (const std::exception& e) {
    throw StatusError(AMPX_STATUS_INTERNAL, where + ": " + e.what());
  }
}

ampx_status* kernel_prepare(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                            ampx_kernel** out) {
  return guard([&] {
    if (!plugin || !node || !out) invalid("kernel_prepare: NULL argument");
    *out = nullptr;
    const ampx::cuda::DeviceInfo& info = plugin->rt->info(device);
    const ps::NodeView v(*node);
    // Malformed nodes: cpu_ref's validation message, as INVALID_ARGUMENT.
    std::string why;
    if (!ampx::cpu_ref::can_run(*node, &why)) {
      if (why.rfind("node '", 0) != 0) why = v.where() + ": " + why;
      const bool unknown = ampx::cuda::find_op(v.op_type()) == nullptr;
      throw StatusError(unknown ? AMPX_STATUS_UNSUPPORTED : AMPX_STATUS_INVALID_ARGUMENT, why);
    }
    const ampx::cuda::Answer a = ampx::cuda::answer(*node, info, plugin->rt->cudnn());
    if (a.support == AMPX_SUPPORT_UNSUPPORTED)
      throw StatusError(AMPX_STATUS_UNSUPPORTED, v.where() + ": " + a.note);
    DeviceContext& ctx = plugin->rt->context(device);
    auto k = std::make_unique<ampx_kernel>();
    k->rt = plugin->rt.get();
    k->device = device;
    k->where = v.where();
    for (size_t i = 0; i < v.num_inputs(); ++i)
      k->ins.push_back({ps::byte_size(v.input(i)), ps::dtype_size(v.input(i).dtype)});
    for (size_t i = 0; i < v.num_outputs(); ++i)
      k->outs.push_back({ps::byte_size(v.output(i)), ps::dtype_size(v.output(i).dtype)});
    for_node(k->where, [&] {
      ampx::cuda::OpContext c(v, ctx, info);
      k->op = ampx::cuda::find_op(v.op_type())->make(c);
    });
    *out = k.release();
  });
}

// The device pointer of views[i] after checking that the tensor fits.
unsigned char* resolve(const ampx_kernel& k, const ampx_buffer_view* views, size_t i,
                       const char* what, uint64_t bytes) {
  const ampx_buffer_view& v = *reinterpret_cast<const ampx_buffer_view*>(
      reinterpret_cast<const char*>(views) + i * views[0].struct_size);
  const std::string label = k.where + ": " + what + " " + std::to_string(i);
  if (!v.buffer) invalid("kernel_launch: " + label + " has no buffer");
  if (v.buffer->device != k.device)
    invalid("kernel_launch: " + label + " is on cuda:" + std::to_string(v.buffer->device) +
            ", the kernel on cuda:" + std::to_string(k.device));
  if (v.offset > v.buffer->size || bytes > v.buffer->size - v.offset) {
    invalid("kernel_launch: " + label + " needs " + std::to_string(bytes) + " bytes at offset " +
            std::to_string(v.offset) + " but the buffer has " + std::to_string(v.buffer->size));
  }
  return data(v.buffer) + v.offset;
}

bool overlap(const void* a, uint64_t na, const void* b, uint64_t nb) {
  if (!na || !nb) return false;
  const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + nb && pb < pa + na;
}

ampx_status* kernel_launch(ampx_kernel* k, const ampx_buffer_view* inputs, size_t num_inputs,
                           const ampx_buffer_view* outputs, size_t num_outputs) {
  return guard([&] {
    if (!k) invalid("kernel_launch: NULL kernel");
    if (num_inputs != k->ins.size() || num_outputs != k->outs.size()) {
      invalid("kernel_launch: " + k->where + " expects " + std::to_string(k->ins.size()) +
              " inputs and " + std::to_string(k->outs.size()) + " outputs, got " +
              std::to_string(num_inputs) + " and " + std::to_string(num_outputs));
    }
    if ((num_inputs && !inputs) || (num_outputs && !outputs)) invalid("kernel_launch: NULL views");
    if (num_inputs && !AMPX_HAS_MEMBER(inputs[0], ampx_buffer_view, offset))
      invalid("kernel_launch: view struct_size too small");
    if (num_outputs && !AMPX_HAS_MEMBER(outputs[0], ampx_buffer_view, offset))
      invalid("kernel_launch: view struct_size too small");
    std::vector<const void*> in(num_inputs);
    std::vector<void*> out(num_outputs), real(num_outputs);
    for (size_t i = 0; i < num_inputs; ++i)
      in[i] = resolve(*k, inputs, i, "input", k->ins[i].bytes);
    for (size_t i = 0; i < num_outputs; ++i)
      real[i] = resolve(*k, outputs, i, "output", k->outs[i].bytes);

    DeviceContext& ctx = k->rt->context(k->device);
    ctx.set_last_node(k->where);
    for_node(k->where, [&] {
      // Kernels want element-aligned pointers and outputs apart from the
      // inputs; anything else goes through scratch blocks (512-byte aligned).
      std::vector<DeviceMemory> scratch;
      auto misaligned = [](const void* p, size_t a) {
        return reinterpret_cast<uintptr_t>(p) % std::max<size_t>(a, 1) != 0;
      };
      for (size_t i = 0; i < num_inputs; ++i) {
        if (!misaligned(in[i], k->ins[i].align)) continue;
        scratch.emplace_back(ctx.allocator(), k->ins[i].bytes);
        ampx::cuda::check_cuda(cudaMemcpyAsync(scratch.back().get(), in[i], k->ins[i].bytes,
                                               cudaMemcpyDeviceToDevice, ctx.stream()),
                               "cudaMemcpyAsync (staging)");
        in[i] = scratch.back().get();
      }
      std::vector<bool> staged(num_outputs, false);
      for (size_t i = 0; i < num_outputs; ++i) {
        bool need = misaligned(real[i], k->outs[i].align);
        for (size_t j = 0; !need && j < num_inputs; ++j)
          need = overlap(real[i], k->outs[i].bytes, in[j], k->ins[j].bytes);
        for (size_t j = 0; !need && j < i; ++j)
          need = overlap(real[i], k->outs[i].bytes, real[j], k->outs[j].bytes);
        staged[i] = need;
        if (need) {
          scratch.emplace_back(ctx.allocator(), k->outs[i].bytes);
          out[i] = scratch.back().get();
        } else {
          out[i] = real[i];
        }
      }
      k->op->launch(in, out);
      for (size_t i = 0; i < num_outputs; ++i) {
        if (staged[i] && k->outs[i].bytes)
          ampx::cuda::check_cuda(cudaMemcpyAsync(real[i], out[i], k->outs[i].bytes,
                                                 cudaMemcpyDeviceToDevice, ctx.stream()),
                                 "cudaMemcpyAsync (staging)");
      }
    });  // scratch blocks return to the cache; the stream orders their reuse
  });
}

void kernel_destroy(ampx_kernel* kernel) {
  delete kernel;
}

// ABI 1.1: the kernel between two events on its stream (earlier work
// waited for first, so only this launch is between them).
ampx_status* kernel_launch_timed(ampx_kernel* k, const ampx_buffer_view* inputs, size_t num_inputs,
                                 const ampx_buffer_view* outputs, size_t num_outputs,
                                 double* out_device_us) {
  if (!out_device_us)
    return ps::make_status(AMPX_STATUS_INVALID_ARGUMENT, "kernel_launch_timed: NULL out");
  if (!k) return ps::make_status(AMPX_STATUS_INVALID_ARGUMENT, "kernel_launch_timed: NULL kernel");
  ampx::cuda::UniqueEvent begin, end;
  auto make_event = [] {
    cudaEvent_t e = nullptr;
    ampx::cuda::check_cuda(cudaEventCreate(&e), "cudaEventCreate");
    return ampx::cuda::UniqueEvent(e);
  };
  ampx_status* st = guard([&] {
    DeviceContext& ctx = k->rt->context(k->device);
    ctx.synchronize();
    begin = make_event();
    end = make_event();
    ampx::cuda::check_cuda(cudaEventRecord(begin.get(), ctx.stream()), "cudaEventRecord");
  });
  if (st) return st;
  st = kernel_launch(k, inputs, num_inputs, outputs, num_outputs);
  if (st) return st;
  return guard([&] {
    DeviceContext& ctx = k->rt->context(k->device);
    ampx::cuda::check_cuda(cudaEventRecord(end.get(), ctx.stream()), "cudaEventRecord");
    ampx::cuda::check_cuda(cudaEventSynchronize(end.get()), "cudaEventSynchronize");
    float ms = 0;
    ampx::cuda::check_cuda(cudaEventElapsedTime(&ms, begin.get(), end.get()),
                           "cudaEventElapsedTime");
    *out_device_us = static_cast<double>(ms) * 1000.0;
  });
}

ampx_status* synchronize(ampx_plugin* plugin, int32_t device) {
  return guard([&] {
    if (!plugin) invalid("synchronize: NULL plugin");
    plugin->rt->context(device).synchronize();
  });
}

ampx_plugin_api make_api() {
  ampx_plugin_api api{};
  api.struct_size = sizeof api;
  api.abi_major = AMPX_ABI_VERSION_MAJOR;
  api.abi_minor = AMPX_ABI_VERSION_MINOR;
  api.plugin_name = "cuda";
  api.plugin_version = kVersion;
  api.status_code = status_code;
  api.status_message = status_message;
  api.status_destroy = status_destroy;
  api.plugin_create = plugin_create;
  api.plugin_destroy = plugin_destroy;
  api.plugin_info = plugin_info;
  api.device_count = device_count;
  api.device_props = device_props;
  api.query_capability = query_capability;
  api.buffer_alloc = buffer_alloc;
  api.buffer_free = buffer_free;
  api.copy_to_device = copy_to_device;
  api.copy_to_host = copy_to_host;
  api.copy_device_to_device = copy_device_to_device;
  api.kernel_prepare = kernel_prepare;
  api.kernel_launch = kernel_launch;
  api.kernel_destroy = kernel_destroy;
  api.synchronize = synchronize;
  api.kernel_launch_timed = kernel_launch_timed;
  api.buffer_host_ptr = nullptr;  // device memory is not host-visible
  return api;
}

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  static const ampx_plugin_api api = make_api();
  return &api;
}
