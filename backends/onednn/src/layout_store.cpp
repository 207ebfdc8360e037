#include "layout_store.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "context.hpp"
#include "reorder_tally.hpp"

namespace ampx::onednn {

namespace {

using Interval = std::pair<uintptr_t, uintptr_t>;

// Adds [lo, hi) to sorted disjoint intervals, merging.
void add_interval(std::vector<Interval>& v, uintptr_t lo, uintptr_t hi) {
  if (lo >= hi) return;
  std::vector<Interval> out;
  out.reserve(v.size() + 1);
  bool placed = false;
  for (const Interval& i : v) {
    if (i.second < lo) {
      out.push_back(i);
    } else if (hi < i.first) {
      if (!placed) out.emplace_back(lo, hi);
      placed = true;
      out.push_back(i);
    } else {
      lo = std::min(lo, i.first);
      hi = std::max(hi, i.second);
    }
  }
  if (!placed) out.emplace_back(lo, hi);
  v = std::move(out);
}

// The parts of [lo, hi) not in sorted disjoint `v`.
std::vector<Interval> uncovered(const std::vector<Interval>& v, uintptr_t lo, uintptr_t hi) {
  std::vector<Interval> out;
  uintptr_t at = lo;
  for (const Interval& i : v) {
    if (i.second <= at) continue;
    if (i.first >= hi) break;
    if (i.first > at) out.emplace_back(at, i.first);
    at = std::max(at, i.second);
  }
  if (at < hi) out.emplace_back(at, hi);
  return out;
}

}  // namespace

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
  while (it != shadows_.end() && it->first < end) {
    auto next = std::next(it);
    fn(it);  // may erase it
    it = next;
  }
}

void LayoutStore::materialise(Shadow& s) {
  ctx_.run([&] {
    ctx_.count_executed(s.to_plain);
    execute_reorder(ctx_.reorder_totals(), s.to_plain, ctx_.stream(), s.blocked, s.plain);
  });
  s.plain_stale = false;
  materialised_ += 1;
  const auto lo = reinterpret_cast<uintptr_t>(s.plain.get_data_handle());
  forget_from_blocked(lo, lo + s.bytes);
  from_blocked_.emplace(lo, lo + s.bytes);
}

bool LayoutStore::overwrite(Map::iterator it, uintptr_t lo, uintptr_t hi) {
  Shadow& s = it->second;
  const uintptr_t start = it->first, end = start + s.bytes;
  const bool whole = lo <= start && end <= hi;
  if (!s.valid || !s.plain_stale || whole) {
    s.valid = false;
    s.plain_stale = false;
    return true;
  }
  Pending p{start, std::move(s), {}};
  add_interval(p.covered, std::max(lo, start), std::min(hi, end));
  pending_.push_back(std::move(p));
  shadows_.erase(it);
  return false;
}

void LayoutStore::cover_pending(uintptr_t lo, uintptr_t hi) {
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    const uintptr_t end = p.start + p.s.bytes;
    if (lo < end && p.start < hi) {
      add_interval(p.covered, std::max(lo, p.start), std::min(hi, end));
      if (uncovered(p.covered, p.start, end).empty()) {
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
    }
    ++i;
  }
}

void LayoutStore::write_back_pending(uintptr_t lo, uintptr_t hi) {
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    const uintptr_t end = p.start + p.s.bytes;
    const auto left = uncovered(p.covered, p.start, end);
    const bool touched = std::any_of(
        left.begin(), left.end(), [&](const Interval& v) { return v.first < hi && lo < v.second; });
    if (!touched) {
      ++i;
      continue;
    }
    // The whole tensor to plain in scratch, then only its own parts into the
    // buffer: the covered ones hold other values now.
    scratch_.resize(p.s.bytes);
    dnnl::memory image(p.s.plain.get_desc(), ctx_.engine(), scratch_.data());
    ctx_.run([&] {
      ctx_.count_executed(p.s.to_plain);
      execute_reorder(ctx_.reorder_totals(), p.s.to_plain, ctx_.stream(), p.s.blocked, image);
    });
    materialised_ += 1;
    auto* base = reinterpret_cast<unsigned char*>(p.start);
    for (const Interval& v : left)
      std::memcpy(base + (v.first - p.start), scratch_.data() + (v.first - p.start),
                  v.second - v.first);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void LayoutStore::before_read(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p);
  for_overlapping(lo, bytes, [&](Map::iterator it) {
    if (it->second.valid && it->second.plain_stale) materialise(it->second);
  });
  if (!pending_.empty() && bytes) write_back_pending(lo, lo + bytes);
}

void LayoutStore::forget_from_blocked(uintptr_t lo, uintptr_t hi) {
  if (from_blocked_.empty() || lo >= hi) return;
  auto it = from_blocked_.upper_bound(lo);
  if (it != from_blocked_.begin() && std::prev(it)->second > lo) it = std::prev(it);
  while (it != from_blocked_.end() && it->first < hi) it = from_blocked_.erase(it);
}

bool LayoutStore::round_trip_source(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p);
  const auto it = from_blocked_.find(lo);
  return it != from_blocked_.end() && it->second == lo + bytes;
}

void LayoutStore::mark_round_trip_source(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p);
  forget_from_blocked(lo, lo + bytes);
  from_blocked_.emplace(lo, lo + bytes);
}

void LayoutStore::count_round_trip() noexcept {
  if (ctx_.counting()) round_trips_ += 1;
}

void LayoutStore::before_write(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  forget_from_blocked(lo, hi);
  for_overlapping(lo, bytes, [&](Map::iterator it) { overwrite(it, lo, hi); });
  if (!pending_.empty() && bytes) cover_pending(lo, hi);
}

void LayoutStore::released(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  // Only whole buffers are freed, and shadows lie inside one buffer.
  shadows_.erase(shadows_.lower_bound(lo), shadows_.lower_bound(hi));
  forget_from_blocked(lo, hi);
  std::erase_if(pending_, [&](const Pending& x) { return lo <= x.start && x.start < hi; });
}

dnnl::memory LayoutStore::current(const void* p, uint64_t bytes) {
  std::lock_guard lock(mu_);
  const auto it = shadows_.find(reinterpret_cast<uintptr_t>(p));
  if (it == shadows_.end() || !it->second.valid || it->second.bytes != bytes) return {};
  return it->second.blocked;
}

void LayoutStore::count_launch_reorder() noexcept {
  if (ctx_.counting()) launch_ += 1;
}

dnnl::memory LayoutStore::produce(void* p, uint64_t bytes, const dnnl::memory::desc& plain,
                                  const dnnl::memory::desc& want) {
  std::lock_guard lock(mu_);
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  forget_from_blocked(lo, hi);
  // The new value overwrites whatever lay in its range: other shadows there
  // are dropped (or become pending), so shadows stay disjoint.
  for_overlapping(lo, bytes, [&](Map::iterator it) {
    if (it->first == lo && it->second.bytes == bytes) return;
    if (overwrite(it, lo, hi)) shadows_.erase(it);
  });
  // A pending shadow of exactly this range (the same node, a run later):
  // its memory is reused rather than freed here and allocated again.
  Shadow reuse;
  for (Pending& x : pending_) {
    if (x.start == lo && x.s.bytes == bytes && x.s.blocked.get_desc() == want) {
      reuse = std::move(x.s);
      x.covered = {{lo, hi}};
    }
  }
  cover_pending(lo, hi);
  auto [it, fresh] = shadows_.try_emplace(lo);
  Shadow& s = it->second;
  if (fresh && reuse.blocked) s = std::move(reuse);
  const dnnl::engine& eng = ctx_.engine();
  if (!s.blocked || s.blocked.get_desc() != want) {
    if (!s.storage || s.blocked.get_desc().get_size() < want.get_size())
      s.storage = pool_.take(want.get_size());
    s.blocked = dnnl::memory(want, eng, s.storage.get());
    s.to_plain = {};
  }
  if (!s.plain || s.plain.get_desc() != plain) {
    s.plain = dnnl::memory(plain, eng, p);
    s.to_plain = {};
  }
  // Created under the plugin's thread count, as every primitive (README,
  // "Threads"): made under the caller's default, the write-back reorder ran
  // 2-thread regions in a threads=1 plugin, whose spinning OpenMP workers
  // cost a training step (which writes back every shadow its plain loops
  // and several-step kernels read) 3x its time.
  if (!s.to_plain) ctx_.run([&] { s.to_plain = dnnl::reorder(s.blocked, s.plain); });
  s.bytes = bytes;
  s.valid = true;
  s.plain_stale = true;
  return s.blocked;
}

}  // namespace ampx::onednn
