// Plugins whose kernels misbehave where only a conformance run sees it
// (`ampx plugin-check`), built from this file:
//   liar:       answers `native` for every node the reference kernels run,
//               in every dtype, and its Relu is off by one (a native answer
//               with wrong results: reported as a lie);
//   oob_writer: the reference kernels, but Relu writes one element past the
//               end of its output (AddressSanitizer reports it under
//               plugin-check in a sanitizer build);
//   leaker:     the reference kernels, but every Relu kernel keeps 4 KiB that
//               kernel_destroy never frees (LeakSanitizer reports it when
//               plugin-check has unloaded the plugin, in a sanitizer build).
// And the hostile zoo's kernels and C++ exceptions (HOSTILE_*), each of which
// would take a host down that launched or asked it in-process:
//   hostile_launch_crash:   every kernel launch raises SIGSEGV;
//   hostile_launch_hang:    every kernel launch waits forever;
//   hostile_launch_oob_256: every kernel writes 256 bytes past its output;
//   hostile_launch_oob_16m: every kernel writes 16 MiB past its output;
//   hostile_throw_devices:  device_props throws a C++ exception (through the
//                           C ABI: the table's member is replaced);
//   hostile_throw_query:    query_capability throws one.
// The pre-flight's smoke launch and `ampx plugin-check` must each catch
// them, name the plugin and go on.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "ampx/backend_api.h"
#include "ampx/host_plugin.hpp"
#include "ampx/plugin_support.hpp"

namespace {

using ampx::host_plugin::CapabilityAnswer;
using ampx::host_plugin::CapabilityPolicy;
using ampx::reference::CpuKernel;

class Misbehaving final : public CpuKernel {
 public:
  Misbehaving(std::unique_ptr<CpuKernel> inner, const ampx_node_desc& node)
      : inner_(std::move(inner)),
        bytes_(ampx::plugin_support::byte_size(node.outputs[0])),
        dtype_(node.outputs[0].dtype) {
#ifdef MISBEHAVING_LEAKER
    // The defect under test, on purpose: memory no destructor releases.
    leaked_ = new unsigned char[4096];
    leaked_[0] = 1;
#endif
  }
  void run(std::span<const void* const> in, std::span<void* const> out) override {
#if defined(HOSTILE_LAUNCH_CRASH)
    std::raise(SIGSEGV);
#elif defined(HOSTILE_LAUNCH_HANG)
    for (;;) pause();
#endif
    inner_->run(in, out);
#if defined(HOSTILE_LAUNCH_OOB)
    // The defect under test, on purpose: HOSTILE_LAUNCH_OOB bytes written
    // from the end of the output on.
    std::memset(static_cast<unsigned char*>(out[0]) + bytes_, 0x7f, HOSTILE_LAUNCH_OOB);
    (void)dtype_;
#elif defined(HOSTILE_LAUNCH_CRASH) || defined(HOSTILE_LAUNCH_HANG) || \
    defined(HOSTILE_THROW_DEVICES) || defined(HOSTILE_THROW_QUERY)
    (void)bytes_;
    (void)dtype_;
#elif defined(MISBEHAVING_LEAKER)
    (void)bytes_;
    (void)dtype_;
#elif defined(MISBEHAVING_LIAR)
    if (dtype_ == AMPX_DTYPE_F32) {
      auto* y = static_cast<float*>(out[0]);
      for (size_t i = 0; i < bytes_ / sizeof(float); ++i) y[i] += 1.0f;
    } else {
      auto* y = static_cast<unsigned char*>(out[0]);
      for (size_t i = 1; i < bytes_; i += 2) y[i] ^= 0x10;  // the high byte's exponent bit
    }
#else
    // Past the end of the output, beyond the host_plugin's 64-byte rounding
    // of the buffer too: in an arena this is another tensor's memory.
    auto* y = static_cast<unsigned char*>(out[0]);
    std::memset(y + (bytes_ + 63) / 64 * 64, 0x7f, 4);
#endif
  }

 private:
  std::unique_ptr<CpuKernel> inner_;
  uint64_t bytes_;
  ampx_dtype dtype_;
  unsigned char* leaked_ = nullptr;  // leaker only: never freed
};

class Policy final : public CapabilityPolicy {
 public:
  CapabilityAnswer answer(const ampx_node_desc&) const override {
    CapabilityAnswer a;
    a.support = AMPX_SUPPORT_NATIVE;
    return a;
  }
  std::unique_ptr<CpuKernel> make_kernel(const ampx_node_desc& node) const override {
    auto k = ampx::reference::make_kernel(node);
#if !defined(HOSTILE_LAUNCH_CRASH) && !defined(HOSTILE_LAUNCH_HANG) && !defined(HOSTILE_LAUNCH_OOB)
    if (std::string(node.op_type) != "Relu") return k;  // only Relu misbehaves
#endif
    return std::make_unique<Misbehaving>(std::move(k), node);
  }
};

std::unique_ptr<CapabilityPolicy> make_policy(const ampx::plugin_support::PluginOptions&) {
  return std::make_unique<Policy>();
}

constexpr ampx::host_plugin::HostPluginSpec kSpec{MISBEHAVING_NAME, "0.0.1", "reference kernels",
                                                  "Misbehaving CPU", &make_policy};

#if defined(HOSTILE_THROW_DEVICES) || defined(HOSTILE_THROW_QUERY)
// The defect under test, on purpose: a C++ exception out of a C entry point.
ampx_status* throwing_device_props(ampx_plugin*, int32_t, ampx_device_props*) {
  throw std::runtime_error("device_props is not implemented");
}
ampx_status* throwing_query(ampx_plugin*, int32_t, const ampx_node_desc*, ampx_capability*) {
  throw std::runtime_error("query_capability is not implemented");
}
#endif

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
#if defined(HOSTILE_THROW_DEVICES) || defined(HOSTILE_THROW_QUERY)
  static const ampx_plugin_api table = [] {
    ampx_plugin_api t = *ampx::host_plugin::host_plugin_entry<kSpec>();
#if defined(HOSTILE_THROW_DEVICES)
    t.device_props = throwing_device_props;
#else
    t.query_capability = throwing_query;
#endif
    return t;
  }();
  return &table;
#else
  return ampx::host_plugin::host_plugin_entry<kSpec>();
#endif
}
