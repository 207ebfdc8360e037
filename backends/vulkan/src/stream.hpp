// The recording side of a device: kernel launches and device-side copies are
// recorded into one command buffer and submitted together at flush() (called
// by synchronize, copy_to_host, and anything that must see finished work),
// so a graph run is one vkQueueSubmit, not one per node. Each recorded
// command is preceded by a full compute/transfer memory barrier: nodes run
// in launch order, as the ABI promises.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <vector>

#include "handle.hpp"
#include "memory.hpp"

namespace ampx::vulkan {

class Stream {
 public:
  Stream(VkDevice dev, VkQueue queue, uint32_t family, MemoryPool& pool);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  // The command buffer to record into (begun on first use), after a barrier
  // ordering it behind everything recorded before. `what` names the command
  // for error messages ("node 'conv1' (Conv2d)").
  VkCommandBuffer record(const std::string& what);
  // Keeps a staging buffer alive until the recorded work has run.
  void keep(Allocation a);
  bool pending() const noexcept { return recording_; }
  // Submits what was recorded and waits for it. Throws StatusError
  // (UNAVAILABLE on a lost device, naming the recorded nodes).
  void flush();
  bool lost() const noexcept { return lost_; }

  // Device time of what `record_work` records, in microseconds: flushes
  // earlier work, brackets the new commands with timestamps (top and bottom
  // of the pipe), submits and waits. Needs timestamp_bits > 0.
  template <typename Fn>
  double timed(const std::string& what, uint32_t timestamp_bits, float period_ns,
               Fn&& record_work) {
    flush();
    begin_timing(what);
    record_work();
    return end_timing(what, timestamp_bits, period_ns);
  }

 private:
  VkDevice dev_;
  VkQueue queue_;
  MemoryPool& pool_;
  Handle<VkCommandPool> cmd_pool_;
  Handle<VkFence> fence_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  bool recording_ = false;
  bool lost_ = false;
  std::vector<std::string> recorded_;
  std::vector<Allocation> keep_;
  Handle<VkQueryPool> timestamps_;  // two queries, made on first use

  void begin_timing(const std::string& what);
  double end_timing(const std::string& what, uint32_t timestamp_bits, float period_ns);
};

}  // namespace ampx::vulkan
