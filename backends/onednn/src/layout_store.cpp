#include "layout_store.hpp"

#include <iterator>

#include "context.hpp"

namespace ampx::onednn {

template <typename Fn>
void LayoutStore::for_overlapping(uintptr_t p, uint64_t bytes, Fn&& fn) {
  if (shadows_.empty() || bytes == 0) return;
  const uintptr_t end = p + bytes;
  auto it = shadows_.upper_bound(p);
  // Shadows never overlap each other, so only the one just below p can
  // reach into the range from before it.
  if (it != shadows_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second.bytes > p) it = prev;
  }
  for (; it != shadows_.end() && it->first < end; ++it) fn(it->first, it->second);
}

void LayoutStore::materialise(Shadow& s) {
  ctx_.run([&] {
    s.to_plain.execute(ctx_.stream(), s.blocked, s.plain);
    ctx_.stream().wait();
  });
  s.plain_stale = false;
  materialised_ += 1;
}

void LayoutStore::invalidate(uintptr_t start, Shadow& s, uintptr_t lo, uintptr_t hi) {
  if (!s.valid) return;
  const bool covered = lo <= start && start + s.bytes <= hi;
  if (!covered && s.plain_stale) materialise(s);
  s.valid = false;
  s.plain_stale = false;
}

void LayoutStore::before_read(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  for_overlapping(reinterpret_cast<uintptr_t>(p), bytes, [&](uintptr_t, Shadow& s) {
    if (s.valid && s.plain_stale) materialise(s);
  });
}

void LayoutStore::before_write(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p);
  for_overlapping(lo, bytes,
                  [&](uintptr_t start, Shadow& s) { invalidate(start, s, lo, lo + bytes); });
}

void LayoutStore::released(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (shadows_.empty()) return;
  const auto lo = reinterpret_cast<uintptr_t>(p);
  // Only whole buffers are freed, and shadows lie inside one buffer.
  shadows_.erase(shadows_.lower_bound(lo), shadows_.lower_bound(lo + bytes));
}

dnnl::memory LayoutStore::current(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto it = shadows_.find(reinterpret_cast<uintptr_t>(p));
  if (it == shadows_.end() || !it->second.valid || it->second.bytes != bytes) return {};
  return it->second.blocked;
}

dnnl::memory LayoutStore::produce(void* p, uint64_t bytes, const dnnl::memory::desc& plain,
                                  const dnnl::memory::desc& want) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  // Other shadows in the range are overwritten (written back first where
  // they reach beyond it) and dropped, so shadows stay disjoint.
  std::vector<uintptr_t> drop;
  for_overlapping(lo, bytes, [&](uintptr_t start, Shadow& s) {
    if (start == lo && s.bytes == bytes) return;
    invalidate(start, s, lo, hi);
    drop.push_back(start);
  });
  for (uintptr_t d : drop) shadows_.erase(d);
  Shadow& s = shadows_[lo];
  const dnnl::engine& eng = ctx_.engine();
  if (!s.blocked || s.blocked.get_desc() != want) {
    s.blocked = dnnl::memory(want, eng);
    s.to_plain = {};
  }
  if (!s.plain || s.plain.get_desc() != plain) {
    s.plain = dnnl::memory(plain, eng, p);
    s.to_plain = {};
  }
  if (!s.to_plain) s.to_plain = dnnl::reorder(s.blocked, s.plain);
  s.bytes = bytes;
  s.valid = true;
  s.plain_stale = true;
  return s.blocked;
}

}  // namespace ampx::onednn
