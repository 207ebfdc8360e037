// Blocked copies ("shadows") of activations, so that consecutive oneDNN
// primitives hand tensors on in the layout they pick (nChw8c, ...) instead of
// reordering to plain NCHW and back at every launch.
//
// The C ABI hands the plugin one node at a time and buffers are plain host
// memory, so the shadows live beside the buffers, keyed by the address range
// of the plain tensor [p, p + bytes): a producing primitive whose dst layout
// is not plain writes only the shadow, and the plain bytes go stale; a
// consumer whose src layout equals the shadow's uses it directly. Every
// other access to buffer bytes goes through the hooks of the host glue
// (CapabilityPolicy::before_read / before_write / released), so:
//   - a plain read of a range (copy to host or to another buffer, loop and
//     reference kernels, a primitive wanting another layout) first writes
//     every stale overlapping shadow back to plain: one reorder
//     ("materialised");
//   - a write (copy from host, a kernel writing plain output, a primitive
//     producing another shadow, the memory planner placing another value
//     there) makes overlapping shadows invalid where it covers them. A stale
//     shadow only partly overwritten may still be read elsewhere, but
//     usually it is a dead value whose range the memory planner reuses
//     piecewise: it becomes "pending", written back (its uncovered part
//     only) when a read touches that part, dropped unwritten once writes
//     have covered it all. Writing it back at once cost a reorder of every
//     such dead activation per run (the cnn ran slower blocked than plain);
//   - freeing the buffer drops its shadows.
// An invalid shadow keeps its memory for the next producer of the same
// range (a pending one too), so steady-state launches allocate nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "block_pool.hpp"

namespace ampx::onednn {

class Context;

// Per-launch reorders of activations (never constants, which are reordered
// once at prepare), for tests and the benchmark.
struct ReorderCounts {
  uint64_t launch = 0;        // plain <-> primitive layout around a primitive
  uint64_t materialised = 0;  // a stale plain tensor written from its shadow
  // Of `launch`: plain -> blocked reorders of a value that was blocked
  // before (see LayoutStore::round_trip_source): a primitive's blocked
  // value went to plain and back between two primitives.
  uint64_t round_trips = 0;
  uint64_t total() const noexcept { return launch + materialised; }
};

class LayoutStore {
 public:
  LayoutStore(Context& ctx, bool enabled) : ctx_(ctx), enabled_(enabled) {}
  LayoutStore(const LayoutStore&) = delete;
  LayoutStore& operator=(const LayoutStore&) = delete;

  // Off (option blocked_activations=0): no shadow is ever made, every
  // primitive reorders plain in and out as before.
  bool enabled() const noexcept { return enabled_; }

  // The glue's hooks (see the file comment).
  void before_read(const void* p, uint64_t bytes);
  void before_write(const void* p, uint64_t bytes);
  void released(const void* p, uint64_t bytes);

  // The current shadow of exactly [p, p + bytes), or an empty memory.
  dnnl::memory current(const void* p, uint64_t bytes);
  // Memory in layout `want` that a primitive is about to write the tensor
  // [p, p + bytes) into (plain layout `plain`): the shadow becomes the
  // current copy and the plain bytes stale.
  dnnl::memory produce(void* p, uint64_t bytes, const dnnl::memory::desc& plain,
                       const dnnl::memory::desc& want);

  // Not while the context is uncounted (Context::Uncounted).
  void count_launch_reorder() noexcept;
  ReorderCounts counts() const noexcept {
    return {launch_.load(), materialised_.load(), round_trips_.load()};
  }

  // Round trips (issue 37: no value goes to plain and back between two
  // primitives). The plain bytes of [p, p + bytes) are "of a blocked value"
  // when they were written back from a shadow (materialised), or written
  // plain by a primitive that read such bytes (a plain BatchNorm between a
  // blocked convolution and the ReLU after it). Any other write (a loop, a
  // copy from the host, a shadow produced there) ends it. A primitive
  // reordering such bytes into a blocked layout counts a round trip.
  bool round_trip_source(const void* p, uint64_t bytes);
  void mark_round_trip_source(const void* p, uint64_t bytes);
  void count_round_trip() noexcept;

 private:
  struct Shadow {
    uint64_t bytes = 0;
    std::shared_ptr<std::byte> storage;  // from pool_, behind `blocked`
    dnnl::memory blocked;                // in the producer's layout
    dnnl::memory plain;                  // over the buffer bytes
    dnnl::reorder to_plain;
    bool valid = false;        // `blocked` holds the tensor
    bool plain_stale = false;  // ... and the buffer bytes do not
  };
  // A stale shadow partly overwritten: `covered` (sorted, disjoint, absolute
  // [lo, hi)) no longer belongs to it; the rest of its range is only in
  // `s.blocked`.
  struct Pending {
    uintptr_t start;
    Shadow s;
    std::vector<std::pair<uintptr_t, uintptr_t>> covered;
  };
  using Map = std::map<uintptr_t, Shadow>;

  // Shadows overlapping [p, p + bytes), in address order.
  template <typename Fn>
  void for_overlapping(uintptr_t p, uint64_t bytes, Fn&& fn);
  void materialise(Shadow& s);
  // A write to [lo, hi) overlapping the shadow at `start`, which is
  // consumed: invalid (kept) when covered whole or not stale, else moved to
  // pending_. Returns whether it is still in the map.
  bool overwrite(Map::iterator it, uintptr_t lo, uintptr_t hi);
  // A write to [lo, hi): pending shadows lose that part, and go when
  // nothing is left.
  void cover_pending(uintptr_t lo, uintptr_t hi);
  // A read of [lo, hi): pending shadows with a part left there are written
  // back (that part only) and go.
  void write_back_pending(uintptr_t lo, uintptr_t hi);

  Context& ctx_;
  const bool enabled_;
  std::mutex mu_;   // launches are sequential, copies may come from any thread
  BlockPool pool_;  // before the shadows: it outlives their storage
  Map shadows_;
  std::vector<Pending> pending_;
  std::vector<unsigned char> scratch_;  // a pending shadow's plain image
  // Ranges whose plain bytes are of a blocked value (round_trip_source),
  // start -> end; disjoint.
  std::map<uintptr_t, uintptr_t> from_blocked_;
  void forget_from_blocked(uintptr_t lo, uintptr_t hi);
  std::atomic<uint64_t> launch_{0}, materialised_{0}, round_trips_{0};
};

}  // namespace ampx::onednn
