// Buckets on the device: each gradient is copied (device to device, in
// the stream's order) into its bucket's buffer as soon as its producer is
// launched; a complete bucket, strictly in bucket order as on the host
// path, is narrowed to 16 bits where the wire wants it, summed by
// ncclAllReduce on the device's stream and widened back; the readers' copies
// out of the bucket follow on the same stream. The host waits only where
// the first reader needs a bucket (a marker after its all-reduce, polled
// with NCCL's asynchronous error and bounded by --comm-timeout), which
// keeps the step's communication figures and the fault rules of the host
// path.
#include "nccl_step_exchange.hpp"

#include <spdlog/spdlog.h>
#include <ampx/nccl/nccl_loader.hpp>

#include <map>
#include <optional>
#include <stdexcept>

namespace ampx::train {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

nccl::WireType wire_type(DType d) {
  if (d == DType::kF16) return nccl::WireType::kF16;
  if (d == DType::kBF16) return nccl::WireType::kBF16;
  return nccl::WireType::kF32;
}

nccl::Module* module_of(NcclState& state, std::string& why) {
  return state.module != nullptr ? state.module : nccl::nccl_module(why);
}

struct DeviceBucket {
  DType wire = DType::kF32;
  std::vector<size_t> members;
  std::vector<size_t> offsets;  // elements
  size_t elements = 0;
  plugins::Buffer f32;   // the bucket's gradients
  plugins::Buffer half;  // 16-bit wire only
  void* f32_ptr = nullptr;
  void* half_ptr = nullptr;
  std::unique_ptr<nccl::Marker> marker;
  size_t produced = 0;
  bool started = false, done = false;
  Clock::time_point start;
};

class NcclStepExchange final : public StepExchange {
 public:
  NcclStepExchange(NcclState& state, std::unique_ptr<StepExchange> host,
                   std::span<const BucketedGradient> gradients,
                   std::vector<std::vector<size_t>> members)
      : state_(state), host_(std::move(host)), gradients_(gradients.size()) {
    for (auto& m : members) {
      DeviceBucket b;
      b.wire = gradients[m.front()].wire;
      for (size_t g : m) {
        bucket_of_[g] = buckets_.size();
        b.offsets.push_back(b.elements);
        b.elements += static_cast<size_t>(gradients[g].elements);
      }
      b.members = std::move(m);
      buckets_.push_back(std::move(b));
    }
  }

  ~NcclStepExchange() override {
    if (!device_) return;
    // Nothing of ours may still run when the buckets are freed (ABI 1.6).
    try {
      for (DeviceBucket& b : buckets_)
        if (b.started && !b.done) state_.comm->wait(*b.marker, "ncclAllReduce");
      device_->synchronize();
    } catch (const std::exception& e) {
      spdlog::warn("data-parallel: {}", e.what());
    }
  }

  std::vector<bool> on_device(std::span<const plugins::Device* const> homes) override {
    std::string why;
    std::optional<plugins::NativeDevice> native;
    try {
      native = choose(homes, why);
    } catch (const std::exception& e) {
      // A plugin's malformed answer: this rank's reason, not a lone throw
      // that would leave the others waiting in the agreement below.
      why = e.what();
      native.reset();
    }
    // Every rank takes the same path, or the collectives would not match.
    if (!state_.sync.all_true(native.has_value())) {
      if (why.empty()) why = "another rank takes the host path";
      if (why != state_.last_reason)
        spdlog::info("data-parallel: the gradients take the host path ({})", why);
      state_.last_reason = why;
      device_ = nullptr;
      return {};
    }
    if (!state_.comm) {
      std::string load_error;
      nccl::Module* module = module_of(state_, load_error);
      state_.comm = std::make_unique<nccl::DeviceCommunicator>(*module, state_.sync,
                                                               native->ordinal, state_.timeout);
      spdlog::info("data-parallel: the gradients go through NCCL on {} ({})", device_id_,
                   module->version());
    }
    native_ = *native;
    for (DeviceBucket& b : buckets_) {
      b.f32 = device_->allocate(b.elements * 4);
      b.f32_ptr = device_->native_ptr(b.f32);
      if (b.wire != DType::kF32) {
        b.half = device_->allocate(b.elements * 2);
        b.half_ptr = device_->native_ptr(b.half);
      }
      b.marker = state_.comm->comm().marker();
    }
    std::vector<bool> answer(homes.size(), false);
    for (size_t i = 0; i < gradients_ && i < homes.size(); ++i) answer[i] = true;
    return answer;
  }

  void begin_step() override {
    host_->begin_step();
    for (DeviceBucket& b : buckets_) {
      if (b.started && !b.done) state_.comm->wait(*b.marker, "ncclAllReduce");
      b.produced = 0;
      b.started = b.done = false;
    }
    next_start_ = 0;
    step_ = {};
  }

  StepCommunication step_communication() const override {
    StepCommunication s = host_->step_communication();
    s.buckets += step_.buckets;
    s.wire_bytes += step_.wire_bytes;
    s.comm_ms += step_.comm_ms;
    s.exposed_ms += step_.exposed_ms;
    return s;
  }

  std::span<std::byte> host_copy(size_t i, size_t bytes) override {
    return host_->host_copy(i, bytes);
  }
  void produced(size_t i, std::span<std::byte> bytes) override { host_->produced(i, bytes); }
  void needed(size_t i, std::span<std::byte> bytes) override { host_->needed(i, bytes); }

  void progress() override {
    host_->progress();
    for (size_t k = 0; k < next_start_; ++k) {
      DeviceBucket& b = buckets_[k];
      if (b.started && !b.done && state_.comm->test(*b.marker, what(k))) finish(b);
    }
  }

  void produced_on_device(size_t i, const DeviceSlot& slot) override {
    DeviceBucket& b = buckets_[bucket_of_.at(i)];
    device_->copy_device_to_device(b.f32, b.offsets[slot_in(b, i)] * 4, *slot.buffer, slot.offset,
                                   slot.bytes);
    ++b.produced;
    start_ready_buckets();
  }

  void needed_on_device(size_t i, const DeviceSlot& slot) override {
    const size_t k = bucket_of_.at(i);
    DeviceBucket& b = buckets_[k];
    if (!b.started)
      throw std::logic_error("a gradient is read before its bucket's all-reduce could start");
    if (!b.done) {
      const auto t0 = Clock::now();
      state_.comm->wait(*b.marker, what(k));
      step_.exposed_ms += ms_between(t0, Clock::now());
      finish(b);
    }
    device_->copy_device_to_device(*slot.buffer, slot.offset, b.f32, b.offsets[slot_in(b, i)] * 4,
                                   slot.bytes);
  }

 private:
  // The device every gradient lives on, with its native handles, or
  // nullopt and why not.
  std::optional<plugins::NativeDevice> choose(std::span<const plugins::Device* const> homes,
                                              std::string& why) {
    std::string load_error;
    if (module_of(state_, load_error) == nullptr) {
      why = load_error;
      return std::nullopt;
    }
    const plugins::Device* d = nullptr;
    for (size_t i = 0; i < gradients_ && i < homes.size(); ++i) {
      if (d != nullptr && homes[i] != d) {
        why = "the gradients live on more than one device";
        return std::nullopt;
      }
      d = homes[i];
    }
    if (d == nullptr) {
      why = "no gradients";
      return std::nullopt;
    }
    std::optional<plugins::NativeDevice> native = d->native();
    if (!native) {
      why = d->id() + " has no native CUDA handles";
      return std::nullopt;
    }
    if (state_.comm && state_.comm->ordinal() != native->ordinal) {
      why = "the NCCL communicator belongs to another CUDA device";
      return std::nullopt;
    }
    device_ = d;
    device_id_ = d->id();
    return native;
  }

  static size_t slot_in(const DeviceBucket& b, size_t gradient) {
    for (size_t k = 0; k < b.members.size(); ++k)
      if (b.members[k] == gradient) return k;
    throw std::logic_error("a gradient is not in its bucket");
  }

  static std::string what(size_t k) { return "ncclAllReduce of bucket " + std::to_string(k); }

  void start_ready_buckets() {
    nccl::Comm& comm = state_.comm->comm();
    while (next_start_ < buckets_.size() &&
           buckets_[next_start_].produced == buckets_[next_start_].members.size()) {
      DeviceBucket& b = buckets_[next_start_++];
      b.start = Clock::now();
      b.started = true;
      auto* f32 = static_cast<float*>(b.f32_ptr);
      if (b.wire == DType::kF32) {
        comm.allreduce_sum(f32, b.elements, nccl::WireType::kF32, native_.stream);
        step_.wire_bytes += b.elements * 4;
      } else {
        const nccl::WireType t = wire_type(b.wire);
        comm.narrow(f32, b.half_ptr, b.elements, t, native_.stream);
        comm.allreduce_sum(b.half_ptr, b.elements, t, native_.stream);
        comm.widen(b.half_ptr, f32, b.elements, t, native_.stream);
        step_.wire_bytes += b.elements * 2;
      }
      b.marker->record(native_.stream);
      ++step_.buckets;
    }
  }

  void finish(DeviceBucket& b) {
    b.done = true;
    step_.comm_ms += ms_between(b.start, Clock::now());
  }

  NcclState& state_;
  std::unique_ptr<StepExchange> host_;
  size_t gradients_ = 0;
  std::vector<DeviceBucket> buckets_;
  std::map<size_t, size_t> bucket_of_;
  const plugins::Device* device_ = nullptr;
  std::string device_id_;
  plugins::NativeDevice native_;
  size_t next_start_ = 0;
  StepCommunication step_;
};

}  // namespace

std::unique_ptr<StepExchange> make_nccl_step_exchange(
    NcclState& state, std::unique_ptr<StepExchange> host,
    std::span<const BucketedGradient> gradients, std::vector<std::vector<size_t>> bucket_members) {
  return std::make_unique<NcclStepExchange>(state, std::move(host), gradients,
                                            std::move(bucket_members));
}

}  // namespace ampx::train
