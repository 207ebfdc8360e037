// What a plan needs in memory on each device, against what the devices have
// and what the caller allows, decided before anything is allocated: a plan
// larger than the machine is refused in one line with the figures instead
// of allocating until the kernel kills the process.
//
// Host memory (cpu_ref, onednn and any other AMPX_DEVICE_CPU device, the
// copies' staging and the caller's input and output tensors) is one pool,
// counted together against what the host has available *now*: Linux's
// MemAvailable, and the cgroup's memory.max less memory.current where a
// container sets one. Not the physical total the device reports
// (ampx_device_props::memory_bytes): the model already loaded, other
// processes and a container's limit are not there to take. Other devices
// are counted against their own ampx_device_props::memory_bytes (0: not
// known, not checked). Kernels' own workspaces are not known before they
// are prepared and are not counted.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace ampx {

namespace plugins {
class Device;
}

// What one device holds for a plan.
struct DeviceMemoryNeed {
  uint64_t arena_bytes = 0;     // graph inputs and intermediates (the lifetime plan's peak)
  uint64_t constant_bytes = 0;  // weights and values folded at load
  uint64_t state_bytes = 0;     // state kept between runs
  uint64_t staging_bytes = 0;   // host memory for its copies to another plugin
  uint64_t device_bytes() const { return arena_bytes + constant_bytes + state_bytes; }
};

// What a plan may take beyond what the devices have.
struct MemoryLimit {
  // All devices, their staging and host_bytes together; 0: no limit but
  // the devices' own.
  uint64_t max_bytes = 0;
  // Names the limit in the refusal ("--max-memory",
  // "SessionOptions::max_memory_bytes").
  std::string origin = "the memory limit";
  // Host memory the caller holds beside the plan: the input and output
  // tensors of a run, a second plan that runs after it.
  uint64_t host_bytes = 0;
};

// A plan that does not fit: one line with the figures.
class MemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class MemoryPool { kHost, kDevice };

// A device as the check sees it.
struct DeviceMemory {
  std::string id;
  MemoryPool pool = MemoryPool::kDevice;
  uint64_t capacity_bytes = 0;  // device pool: its memory; 0 = unknown
};

// Throws MemoryError when the plan's total exceeds limit.max_bytes, a
// device's need its capacity, or the host pool's need `host_available`
// (0: unknown, not checked). needs[i] is devices[i]'s.
void check_memory(std::span<const DeviceMemoryNeed> needs, std::span<const DeviceMemory> devices,
                  const MemoryLimit& limit, uint64_t host_available);
// The same for live devices, with host_available_bytes().
void check_memory(std::span<const DeviceMemoryNeed> needs,
                  std::span<const plugins::Device* const> devices, const MemoryLimit& limit);

DeviceMemory device_memory(const plugins::Device& device);
// MemAvailable and the cgroup's room, whichever is less; 0 when neither
// can be read.
uint64_t host_available_bytes();

// "16.0 GiB", "512.0 MiB", "100 B".
std::string bytes_text(uint64_t bytes);

}  // namespace ampx
