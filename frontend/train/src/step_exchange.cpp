// The gradient buckets and synchronized statistics of one training step
// (data_parallel.hpp). Buckets start strictly in bucket order: a bucket
// whose gradients are all in waits for the ones before it, so every rank
// issues the same collectives in the same order even where the ranks'
// steps (another batch size in the last partial batch) schedule their
// backward nodes differently.
#include "step_exchange.hpp"

#include <ampx/half.hpp>

#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>

namespace ampx::train {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Bucket {
  DType wire = DType::kF32;
  int owner = -1;               // ZeRO-1: the rank the sum goes to; -1: every rank
  std::vector<size_t> members;  // gradient indexes
  std::vector<size_t> offsets;  // each member's first element in the bucket
  size_t elements = 0;
  std::vector<float> f32;      // wire kF32
  std::vector<uint16_t> half;  // wire kF16 / kBF16
  size_t produced = 0;
  bool started = false;
  bool done = false;
  Clock::time_point start;
  dist::PendingAllreduce pending;
};

class MpiStepExchange final : public StepExchange {
 public:
  MpiStepExchange(StepCommunicators comms, std::span<const BucketedGradient> gradients,
                  std::vector<std::vector<size_t>> members, std::optional<GuardRule> guard)
      : bucket_comm_(comms.buckets),
        sync_comm_(comms.sync),
        gradients_(gradients.size()),
        guard_(guard) {
    for (auto& m : members) {
      Bucket b;
      b.wire = gradients[m.front()].wire;
      b.owner = gradients[m.front()].owner;
      for (size_t g : m) {
        if (gradients[g].wire != b.wire || gradients[g].owner != b.owner)
          throw std::logic_error("a gradient bucket mixes wire dtypes or owners");
        bucket_of_[g] = buckets_.size();
        b.offsets.push_back(b.elements);
        b.elements += static_cast<size_t>(gradients[g].elements);
      }
      b.members = std::move(m);
      if (b.wire == DType::kF32)
        b.f32.resize(b.elements);
      else
        b.half.resize(b.elements);
      buckets_.push_back(std::move(b));
    }
    for (size_t g = 0; g < gradients_; ++g)
      if (!bucket_of_.contains(g)) throw std::logic_error("a gradient is in no bucket");
  }

  void begin_step() override {
    for (Bucket& b : buckets_) {
      b.pending.wait();  // nothing pending after a complete step; a failed one is dropped
      b.produced = 0;
      b.started = b.done = false;
    }
    next_start_ = 0;
    step_ = {};
    guard_done_ = false;
  }

  StepCommunication step_communication() const override { return step_; }

  // An f32 gradient is copied straight into its bucket (and read back from
  // it): no copy of the exchange's own on either side.
  std::span<std::byte> host_copy(size_t i, size_t bytes) override {
    if (i >= gradients_) return {};
    Bucket& b = buckets_[bucket_of_.at(i)];
    if (b.wire != DType::kF32) return {};
    const size_t k = slot_in(b, i);
    if (bytes != member_elements(b, k) * 4) return {};
    return std::as_writable_bytes(std::span<float>(b.f32).subspan(b.offsets[k], bytes / 4));
  }

  void produced(size_t i, std::span<std::byte> bytes) override {
    if (is_guard(i)) {
      guard_values_[i - gradients_] = bytes;
      return;
    }
    if (i >= gradients_) return;  // a synchronized value: summed when read
    Bucket& b = buckets_[bucket_of_.at(i)];
    const size_t k = slot_in(b, i);
    const size_t n = bytes.size() / 4;
    const auto* src = reinterpret_cast<const float*>(bytes.data());
    if (b.wire == DType::kF32) {
      if (src != b.f32.data() + b.offsets[k])
        std::memcpy(b.f32.data() + b.offsets[k], src, bytes.size());
    } else {
      uint16_t* dst = b.half.data() + b.offsets[k];
      const bool bf16 = b.wire == DType::kBF16;
      for (size_t e = 0; e < n; ++e)
        dst[e] = bf16 ? float_to_bf16_bits(src[e]) : float_to_f16_bits(src[e]);
    }
    ++b.produced;
    start_ready_buckets();
  }

  void progress() override {
    for (size_t k = 0; k < next_start_; ++k) {
      Bucket& b = buckets_[k];
      if (b.started && !b.done && b.pending.test()) finish(b);
    }
  }

  void needed(size_t i, std::span<std::byte> bytes) override {
    if (is_guard(i)) {
      if (!guard_done_) take_guard_verdict();
      return;
    }
    if (i >= gradients_) {
      const auto t0 = Clock::now();
      sync_comm_.allreduce_sum(
          std::span<float>(reinterpret_cast<float*>(bytes.data()), bytes.size() / 4));
      const double ms = ms_between(t0, Clock::now());
      step_.comm_ms += ms;
      step_.exposed_ms += ms;
      ++step_.synchronized;
      return;
    }
    Bucket& b = buckets_[bucket_of_.at(i)];
    if (!b.started)
      throw std::logic_error("a gradient is read before its bucket's all-reduce could start");
    if (!b.done) {
      const auto t0 = Clock::now();
      b.pending.wait();
      step_.exposed_ms += ms_between(t0, Clock::now());
      finish(b);
    }
    const size_t k = slot_in(b, i);
    const size_t n = bytes.size() / 4;
    auto* dst = reinterpret_cast<float*>(bytes.data());
    if (b.owner >= 0 && b.owner != bucket_comm_.rank()) {
      // Another rank's weight: its sum went to its owner; the guard here
      // must count the gradients this rank owns only.
      std::memset(dst, 0, bytes.size());
      return;
    }
    if (b.wire == DType::kF32) {
      if (dst != b.f32.data() + b.offsets[k])
        std::memcpy(dst, b.f32.data() + b.offsets[k], bytes.size());
    } else {
      const uint16_t* src = b.half.data() + b.offsets[k];
      const bool bf16 = b.wire == DType::kBF16;
      for (size_t e = 0; e < n; ++e)
        dst[e] = bf16 ? bf16_bits_to_float(src[e]) : f16_bits_to_float(src[e]);
    }
  }

 private:
  bool is_guard(size_t i) const { return guard_ && i >= gradients_ && i < gradients_ + 2; }

  // The guard's statistics over every rank (train/sharded_optimizer.hpp):
  // the sums of (1 - finite) and norm², then the verdict written into this
  // rank's hyper' and stats.
  void take_guard_verdict() {
    guard_done_ = true;
    const auto hyper = as_floats(guard_values_[0]);
    const auto stats = as_floats(guard_values_[1]);
    if (stats.size() != 2 || hyper.size() < 3)
      throw std::logic_error("the update guard's values were not handed over");
    std::array<float, 2> sums{1.0f - stats[0], stats[1] * stats[1]};
    const auto t0 = Clock::now();
    sync_comm_.allreduce_sum(std::span<float>(sums));
    const double ms = ms_between(t0, Clock::now());
    step_.comm_ms += ms;
    step_.exposed_ms += ms;
    apply_guard_verdict(hyper, stats, sums[0], sums[1], *guard_);
  }

  static std::span<float> as_floats(std::span<std::byte> bytes) {
    return {reinterpret_cast<float*>(bytes.data()), bytes.size() / sizeof(float)};
  }

  // Elements of the bucket's k-th member.
  static size_t member_elements(const Bucket& b, size_t k) {
    const size_t end = k + 1 < b.offsets.size() ? b.offsets[k + 1] : b.elements;
    return end - b.offsets[k];
  }

  static size_t slot_in(const Bucket& b, size_t gradient) {
    for (size_t k = 0; k < b.members.size(); ++k)
      if (b.members[k] == gradient) return k;
    throw std::logic_error("a gradient is not in its bucket");
  }

  void start_ready_buckets() {
    while (next_start_ < buckets_.size() &&
           buckets_[next_start_].produced == buckets_[next_start_].members.size()) {
      Bucket& b = buckets_[next_start_++];
      b.start = Clock::now();
      b.started = true;
      if (b.wire == DType::kF32) {
        const std::span<float> values(b.f32);
        b.pending = b.owner < 0 ? bucket_comm_.start_allreduce_sum(values)
                                : bucket_comm_.start_reduce_sum(values, b.owner);
        step_.wire_bytes += b.elements * 4;
      } else {
        const std::span<uint16_t> values(b.half);
        b.pending = b.owner < 0 ? bucket_comm_.start_allreduce_sum(values, b.wire)
                                : bucket_comm_.start_reduce_sum(values, b.wire, b.owner);
        step_.wire_bytes += b.elements * 2;
      }
      ++step_.buckets;
    }
  }

  void finish(Bucket& b) {
    b.done = true;
    step_.comm_ms += ms_between(b.start, Clock::now());
  }

  dist::Communicator& bucket_comm_;
  dist::Communicator& sync_comm_;
  size_t gradients_ = 0;
  std::vector<Bucket> buckets_;
  std::map<size_t, size_t> bucket_of_;
  size_t next_start_ = 0;
  StepCommunication step_;
  std::optional<GuardRule> guard_;
  std::array<std::span<std::byte>, 2> guard_values_;  // hyper', stats (host copies)
  bool guard_done_ = false;
};

}  // namespace

std::unique_ptr<StepExchange> make_step_exchange(StepCommunicators comms,
                                                 std::span<const BucketedGradient> gradients,
                                                 std::vector<std::vector<size_t>> bucket_members,
                                                 std::optional<GuardRule> guard) {
  return std::make_unique<MpiStepExchange>(comms, gradients, std::move(bucket_members), guard);
}

}  // namespace ampx::train
