// ZeRO-1 (`ampx train --data-parallel --shard-optimizer`, docs/DISTRIBUTED.md,
// "Sharded optimizer"): each rank owns whole weights, updates only those and
// keeps only their optimizer moments. The pieces here are the rules that
// every rank must compute alike: who owns what, and the update guard's
// verdict from the ranks' reduced statistics.
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <set>
#include <span>
#include <string>
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

// The working weights of a sharded rank's planned step. A weight whose
// every reader but its update casts it to one 16-bit type (an O2 layer's
// weight) has that type as its working dtype, the rest f32. Another rank's
// weight with a 16-bit working dtype is then held as that 16-bit copy
// alone: its state input becomes the copy, its Casts go (ZeRO-1: only the
// owner keeps the f32 master). `dtypes` has one entry per weight of `state`
// (state order), the same on every rank of one plan, owned weights
// included: what the all-gather sends.
struct WorkingWeights {
  Graph graph;                // the planned step, rewritten (empty: nothing held in 16-bit)
  std::vector<DType> dtypes;  // per weight: kF32, kF16 or kBF16
  int held_16bit = 0;         // other ranks' weights held as 16-bit copies
};
// `weight_inputs`: each weight's graph input (state order); `owned`: the
// indexes (into weight_inputs) of the weights this rank owns.
WorkingWeights hold_working_copies(const Graph& planned, std::span<const size_t> weight_inputs,
                                   const std::set<size_t>& owned);

// The state one rank of a sharded run keeps, in bytes, against the
// unsharded run's (every rank: all of it, the 16-bit copies of a fused
// optimizer pass not counted).
struct ShardedMemory {
  int rank = 0;
  int ranks = 1;
  int owned_weights = 0;
  int weights = 0;
  int held_16bit = 0;               // other ranks' weights held as 16-bit copies
  uint64_t owned_weight_bytes = 0;  // f32 master weights this rank owns and updates
  uint64_t master_bytes = 0;  // f32 weights kept on this rank (owned, and others' read in f32)
  uint64_t working_copy_bytes = 0;  // other ranks' weights as 16-bit copies
  uint64_t weight_bytes = 0;        // every weight in f32: the unsharded run's masters
  uint64_t optimizer_bytes = 0;     // this rank's optimizer moments
  uint64_t unsharded_optimizer_bytes = 0;
  uint64_t state_bytes = 0;  // everything the step keeps between steps on this rank
  uint64_t unsharded_state_bytes = 0;
};

}  // namespace ampx::train
