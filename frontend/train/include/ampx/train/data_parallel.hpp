// Data-parallel training across processes (issue 41, docs/DISTRIBUTED.md):
// one DataParallel per run, made by every rank of an MPI job, which the
// Trainer uses to split each global batch, to sum the gradients over the
// ranks between the backward pass and the update (in buckets, each started
// as soon as its last gradient is produced), to synchronize BatchNorm's
// batch statistics, and to reduce what every rank must agree on.
//
// The header names no MPI type: without MPI (ampx built where CMake found
// none) the class exists and its constructor throws, saying so.
#pragma once

#include <ampx/exec/value_exchange.hpp>
#include <ampx/ir/dtype.hpp>
#include <ampx/train/sharded_optimizer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::train {

// What gradients travel as (`ampx train --allreduce-dtype`). 16-bit halves
// the bytes: each rank rounds its loss-scaled f32 gradients to the type,
// the sum is 16-bit on the wire (rounded at each hop), and the update
// unscales the result in f32. kAuto: each gradient's own dtype in the
// planned backward (16-bit where a 16-bit node produced it), f32 elsewhere.
enum class AllreduceDtype { kF32, kBF16, kF16, kAuto };
std::string_view allreduce_dtype_name(AllreduceDtype d);  // "f32", "bf16", "f16", "auto"
// Throws std::invalid_argument naming the text.
AllreduceDtype parse_allreduce_dtype(std::string_view text);

// Where the optimizer's state lives (`ampx train --shard-optimizer`):
// replicated, every rank updating every weight (DDP), or ZeRO-1, each rank
// the weights it owns (train/sharded_optimizer.hpp).
enum class OptimizerSharding { kReplicated, kZero1 };

struct DataParallelOptions {
  double bucket_mb = 25;  // a bucket's gradients, in MiB of f32 (PyTorch DDP's default); > 0
  AllreduceDtype allreduce_dtype = AllreduceDtype::kF32;
  // How long a collective waits for the other ranks before the run stops.
  std::chrono::milliseconds comm_timeout{60000};
  OptimizerSharding sharding = OptimizerSharding::kReplicated;
  // Throws std::invalid_argument naming the bad option.
  void validate() const;
};

// One gradient as the buckets see it: its weight's place in the step's
// state order (the same on every rank), its elements and its wire dtype.
struct BucketedGradient {
  std::string weight;
  int64_t elements = 0;
  DType wire = DType::kF32;
  // ZeRO-1: the rank that owns the weight, to which alone the sum goes
  // (the others zero their copy after sending it); -1: every rank (an
  // all-reduce).
  int owner = -1;
};
// Gradients in buckets of at most `bucket_bytes` (counted in f32 bytes, so
// that the bucket boundaries do not move with --allreduce-dtype), the first
// of at most kFirstBucketBytes, in reverse weight order as DDP does (the
// backward pass produces the last layer's gradients first), a new bucket at
// every change of wire dtype or owner; a gradient larger than a bucket is a bucket
// of its own. Each bucket lists indexes into `gradients`.
inline constexpr uint64_t kFirstBucketBytes = uint64_t{1} << 20;  // DDP's first bucket
std::vector<std::vector<size_t>> plan_buckets(std::span<const BucketedGradient> gradients,
                                              uint64_t bucket_bytes);

// Rank `rank`'s share of a global batch of `rows` rows split over `ranks`:
// consecutive rows, the first rows % ranks ranks one more. A rank's share
// is empty when rows < ranks (the Trainer skips such a last batch).
struct RowShare {
  int64_t first = 0;
  int64_t count = 0;
};
RowShare rank_share(int64_t rows, int ranks, int rank);

// One step's communication on this rank.
struct StepCommunication {
  int buckets = 0;
  uint64_t wire_bytes = 0;  // handed to the all-reduces (payload; a ring sends 2(N-1)/N of it)
  double comm_ms = 0;       // each reduction from its start to its observed completion, summed
  double exposed_ms = 0;    // the step waited for communication (not overlapped)
  int synchronized = 0;     // synchronized statistics' reductions (blocking)
};

// The exchange of one compiled step: the values the executor hands over
// (exec/value_exchange.hpp) are first the gradients, in `gradients` order,
// with a sharded optimizer then the update guard's hyper' and stats (one
// group: the verdict over every rank is written into them before the first
// update), then the synchronized values (summed in place when first read).
class StepExchange : public ValueExchange {
 public:
  // Clears the per-step figures before a run; after it, what it did.
  virtual void begin_step() = 0;
  virtual StepCommunication step_communication() const = 0;
};

class DataParallel {
 public:
  // Joins the job: every rank constructs it, in the same order (MPI's
  // initialisation when nothing did it yet, two communicators). Throws
  // std::invalid_argument for bad options, std::runtime_error when ampx
  // was built without MPI or MPI fails.
  explicit DataParallel(DataParallelOptions options);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const;
  int size() const;
  const DataParallelOptions& options() const { return options_; }

  // Collective: throws std::invalid_argument on every rank, in one line
  // naming `what` and the ranks' disagreement, unless all passed the same
  // `text` (a model fingerprint, the plan, the options, a data size).
  void require_agreement(std::string_view what, std::string_view text);
  // In place over the ranks: sums, and element-wise maxima.
  void sum(std::span<float> values);
  void max(std::span<float> values);

  // The exchange for a step whose gradients are `gradients` (bucketed by
  // plan_buckets); with a `guard` rule (a sharded optimizer) the next two
  // values handed over are the guard's hyper' and stats; any value after
  // them is a synchronized f32 value, summed alone when first read.
  std::unique_ptr<StepExchange> make_exchange(std::span<const BucketedGradient> gradients,
                                              std::optional<GuardRule> guard = std::nullopt);
  // Every rank's block of `all` into every rank's (Communicator::
  // allgather_in_place): ZeRO-1's all-gather of the updated weights.
  void allgather(std::span<std::byte> all, std::span<const uint64_t> counts);

  struct Impl;

 private:
  DataParallelOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ampx::train
