#include "allocator.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "ampx/plugin_support.hpp"
#include "cuda_error.hpp"

namespace ampx::cuda {

size_t CachingAllocator::round_size(uint64_t bytes) {
  constexpr uint64_t kSmall = 512, kLarge = 2u << 20;
  const uint64_t unit = bytes >= (1u << 20) ? kLarge : kSmall;
  if (bytes > UINT64_MAX - unit) {
    throw plugin_support::StatusError(
        AMPX_STATUS_OUT_OF_MEMORY,
        "device allocation of " + std::to_string(bytes) + " bytes is too large");
  }
  return static_cast<size_t>(std::max<uint64_t>(1, (bytes + unit - 1) / unit) * unit);
}

CachingAllocator::Block CachingAllocator::allocate(uint64_t bytes) {
  const size_t size = round_size(bytes);
  auto it = free_.lower_bound(size);
  if (it != free_.end() && it->first <= 2 * size) {
    Block b{it->second, it->first};
    free_.erase(it);
    cached_ -= b.capacity;
    in_use_ += b.capacity;
    return b;
  }
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, size);
  if (e == cudaErrorMemoryAllocation && !free_.empty()) {
    (void)cudaGetLastError();
    empty_cache();
    e = cudaMalloc(&p, size);
  }
  check_cuda(
      e, "cudaMalloc(" + std::to_string(bytes) + " bytes) on device " + std::to_string(device_));
  in_use_ += size;
  return {p, size};
}

void CachingAllocator::release(Block b) noexcept {
  if (!b.ptr) return;
  try {
    free_.emplace(b.capacity, b.ptr);
    in_use_ -= b.capacity;
    cached_ += b.capacity;
  } catch (...) {  // the map could not grow: give the memory back instead
    (void)cudaFree(b.ptr);
    in_use_ -= b.capacity;
  }
}

void CachingAllocator::empty_cache() noexcept {
  for (const auto& [size, p] : free_) (void)cudaFree(p);
  free_.clear();
  cached_ = 0;
}

CachingAllocator::~CachingAllocator() {
  // Blocks still in use belong to buffers the host frees before
  // plugin_destroy; the cache is ours.
  if (cudaSetDevice(device_) == cudaSuccess) empty_cache();
}

}  // namespace ampx::cuda
