// ZeRO-1 (`ampx train --data-parallel --shard-optimizer`, docs/DISTRIBUTED.md,
// "Sharded optimizer"): each rank owns whole weights, updates only those and
// keeps only their optimizer moments. The pieces here are the rules that
// every rank must compute alike: who owns what, and the update guard's
// verdict from the ranks' reduced statistics.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ampx::train {

// The owner of each weight (indexes as `elements`, the weights in the step's
// state order): whole weights in contiguous runs of the buckets' order
// (reverse weight order: a bucket of plan_buckets then belongs to one rank,
// and its reduction to that rank is the reduce-scatter), rank 0 taking the
// last weights, each run ending where its cumulative bytes first reach
// r+1 N-ths of the total, and every rank at least one weight. Throws
// std::invalid_argument when there are fewer weights than ranks.
std::vector<int> plan_weight_owners(std::span<const int64_t> elements, int ranks);

// UpdateGuard's attributes (docs/OPS.md), applied on the host.
struct GuardRule {
  double clip_norm = 0;         // 0: no clipping
  bool skip_nonfinite = false;  // an overflowed step is not applied
};

// The update guard's verdict over every rank (docs/OPS.md, UpdateGuard):
// `stats` is this rank's [finite 1/0, norm of its gradients] (the guard over
// the gradients it owns, with neutral attributes) and `hyper` what the guard
// passed on (hyper' = hyper). `nonfinite_ranks` and `norm_squared` are the
// sums over the ranks of (1 - finite) and norm². Writes the global
// [finite, norm] into `stats` and the verdict into `hyper` (grad_scale
// times the clip factor, apply 0 for a skipped step), as one guard over all
// gradients would, up to the rounding of the summed squares.
void apply_guard_verdict(std::span<float> hyper, std::span<float> stats, double nonfinite_ranks,
                         double norm_squared, const GuardRule& rule);

// The state one rank of a sharded run keeps, in bytes, against the
// unsharded run's (every rank: all of it).
struct ShardedMemory {
  int rank = 0;
  int ranks = 1;
  int owned_weights = 0;
  int weights = 0;
  uint64_t owned_weight_bytes = 0;  // f32 master weights this rank updates
  uint64_t weight_bytes = 0;        // all f32 weights (each rank reads them all)
  uint64_t optimizer_bytes = 0;     // this rank's optimizer moments
  uint64_t unsharded_optimizer_bytes = 0;
  uint64_t state_bytes = 0;  // everything the step keeps between steps on this rank
  uint64_t unsharded_state_bytes = 0;
};

}  // namespace ampx::train
