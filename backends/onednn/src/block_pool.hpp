// Storage of the blocked shadows (layout_store.hpp), recycled.
//
// The memory planner gives a dead value's range to the next value, so the
// shadow of a range is dropped and made again at every run; each new shadow
// used to allocate its blocked memory afresh (oneDNN's allocator, page
// faults on first touch: 170 pages a run on SqueezeNet). A dropped shadow's
// storage comes back here instead, and the next shadow of a size up to
// twice as large takes it: a steady run allocates nothing.
//
// Not thread-safe: the layout store calls it under its own mutex. It must
// outlive every block it handed out (declare it before their holders).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>

namespace ampx::onednn {

class BlockPool {
 public:
  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool() {
    for (auto& [bytes, p] : free_) std::free(p);
  }

  // At least `bytes`, 64-byte aligned; returned to the pool when the last
  // holder lets go.
  std::shared_ptr<std::byte> take(size_t bytes) {
    size_t cap = 0;
    std::byte* p = nullptr;
    if (auto it = free_.lower_bound(bytes); it != free_.end() && it->first / 2 <= bytes) {
      cap = it->first;
      p = it->second;
      free_.erase(it);
    } else {
      cap = (bytes + kAlign - 1) / kAlign * kAlign;
      p = static_cast<std::byte*>(std::aligned_alloc(kAlign, cap ? cap : kAlign));
      if (p == nullptr) throw std::bad_alloc();
    }
    return std::shared_ptr<std::byte>(p, [this, cap](std::byte* q) { free_.emplace(cap, q); });
  }

 private:
  static constexpr size_t kAlign = 64;
  std::multimap<size_t, std::byte*> free_;  // capacity -> block
};

}  // namespace ampx::onednn
