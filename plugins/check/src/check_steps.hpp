// Internal to the conformance kit: the RAII owner of a check's plugin
// handles, and the check steps that live in their own files.
#pragma once

#include <ampx/plugin_check/plugin_check.hpp>
#include <ampx/plugins/loaded_plugin.hpp>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ampx::check {

// Owns the plugin's handles made during one check, released in reverse.
class Handles {
 public:
  explicit Handles(const plugins::LoadedPlugin& p) : p_(p) {}
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    for (ampx_kernel* k : kernels_) p_.api().kernel_destroy(k);
    for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) p_.api().buffer_free(*it);
  }
  ampx_buffer* alloc(int32_t device, uint64_t bytes) {
    ampx_buffer* b = nullptr;
    p_.check(p_.api().buffer_alloc(p_.instance(), device, std::max<uint64_t>(bytes, 1), &b),
             "buffer_alloc");
    if (!b) throw std::runtime_error("buffer_alloc returned no buffer and no status");
    buffers_.push_back(b);
    return b;
  }
  ampx_kernel* prepare(int32_t device, const ampx_node_desc& node) {
    ampx_kernel* k = nullptr;
    p_.check(p_.api().kernel_prepare(p_.instance(), device, &node, &k), "kernel_prepare");
    if (!k) throw std::runtime_error("kernel_prepare returned no kernel and no status");
    kernels_.push_back(k);
    return k;
  }

 private:
  const plugins::LoadedPlugin& p_;
  std::vector<ampx_buffer*> buffers_;
  std::vector<ampx_kernel*> kernels_;
};

// NULL handles and arguments, and synchronize of a device out of range:
// each call is made first in a forked child, so a plugin that crashes on
// a bad argument gets a failed check ("crashed (SIGSEGV)"), not a dead
// checker; a call that survived is made again here for its message. Also:
// a kernel_prepare that failed left its out handle NULL.
void check_null_handles(const plugins::LoadedPlugin& p, int32_t devices,
                        std::vector<AbiCheck>& out);

// Copies within and between buffers at offsets, and a kernel reading and
// writing views at offsets into larger buffers: the bytes named change, and
// no other byte does. Skipped (visibly) where the plugin has no devices.
void check_copies_and_views(const plugins::LoadedPlugin& p, int32_t devices,
                            std::vector<AbiCheck>& out);

}  // namespace ampx::check
