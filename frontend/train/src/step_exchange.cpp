// The gradient buckets and synchronized statistics of one training step
// (data_parallel.hpp). Buckets start strictly in bucket order: a bucket
// whose gradients are all in waits for the ones before it, so every rank
// issues the same collectives in the same order even where the ranks'
// steps (another batch size in the last partial batch) schedule their
// backward nodes differently.
#include "step_exchange.hpp"

#include <ampx/half.hpp>

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
  MpiStepExchange(dist::Communicator& buckets, dist::Communicator& sync,
                  std::span<const BucketedGradient> gradients,
                  std::vector<std::vector<size_t>> members)
      : bucket_comm_(buckets), sync_comm_(sync), gradients_(gradients.size()) {
    for (auto& m : members) {
      Bucket b;
      b.wire = gradients[m.front()].wire;
      for (size_t g : m) {
        if (gradients[g].wire != b.wire)
          throw std::logic_error("a gradient bucket mixes wire dtypes");
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
        b.pending = bucket_comm_.start_allreduce_sum(std::span<float>(b.f32));
        step_.wire_bytes += b.elements * 4;
      } else {
        b.pending = bucket_comm_.start_allreduce_sum(std::span<uint16_t>(b.half), b.wire);
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
};

}  // namespace

std::unique_ptr<StepExchange> make_step_exchange(dist::Communicator& buckets,
                                                 dist::Communicator& sync,
                                                 std::span<const BucketedGradient> gradients,
                                                 std::vector<std::vector<size_t>> bucket_members) {
  return std::make_unique<MpiStepExchange>(buckets, sync, gradients, std::move(bucket_members));
}

}  // namespace ampx::train
