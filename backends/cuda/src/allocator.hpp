// A caching allocator of device memory for one device: cudaMalloc underneath
// (never managed memory), freed blocks kept for reuse. All work of a device
// runs on its one stream, so a block freed while kernels that use it are
// still queued can be handed out again at once: the next user's work is
// queued behind them on the same stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace ampx::cuda {

class CachingAllocator {
 public:
  explicit CachingAllocator(int device) : device_(device) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  struct Block {
    void* ptr = nullptr;
    size_t capacity = 0;  // rounded size actually allocated
  };

  // A block of at least `bytes` (the device must be current). Reuses a cached
  // block of up to twice the rounded size; else cudaMalloc, and on
  // out-of-memory releases the cache and tries once more. Throws a
  // StatusError OUT_OF_MEMORY with the CUDA error text when that fails too.
  Block allocate(uint64_t bytes);
  // Returns a block to the cache. Never throws.
  void release(Block b) noexcept;
  // cudaFree()s every cached block (the device must be current).
  void empty_cache() noexcept;

  uint64_t bytes_in_use() const noexcept { return in_use_; }
  uint64_t bytes_cached() const noexcept { return cached_; }

  // Sizes are rounded up to 512 bytes (small) or 2 MiB (from 1 MiB up), so
  // that blocks are reusable across slightly different requests.
  static size_t round_size(uint64_t bytes);

 private:
  int device_;
  std::multimap<size_t, void*> free_;  // capacity -> pointer
  uint64_t in_use_ = 0, cached_ = 0;
};

// A block owned by RAII, returned to its allocator on destruction.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(CachingAllocator& a, uint64_t bytes) : alloc_(&a), block_(a.allocate(bytes)) {}
  ~DeviceMemory() { reset(); }
  DeviceMemory(DeviceMemory&& o) noexcept : alloc_(o.alloc_), block_(o.block_) { o.block_ = {}; }
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    if (this != &o) {
      reset();
      alloc_ = o.alloc_;
      block_ = o.block_;
      o.block_ = {};
    }
    return *this;
  }
  void reset() noexcept {
    if (alloc_ && block_.ptr) alloc_->release(block_);
    block_ = {};
  }
  void* get() const noexcept { return block_.ptr; }
  size_t capacity() const noexcept { return block_.capacity; }

 private:
  CachingAllocator* alloc_ = nullptr;
  CachingAllocator::Block block_;
};

}  // namespace ampx::cuda
