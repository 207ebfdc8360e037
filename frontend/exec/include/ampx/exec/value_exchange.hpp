// A caller's hand inside a run: values of the executed graph that it may
// rewrite between the step that produces them and the first step that reads
// them. Data-parallel training (docs/DISTRIBUTED.md) sums the gradients over
// the ranks this way, each bucket's all-reduce started as soon as its last
// gradient is produced so that it overlaps the rest of the backward pass,
// and the synchronized BatchNorm's statistics in the middle of the forward.
//
// For each exchanged value the executor (both executors: executor.hpp,
// eager_executor.hpp) keeps a host copy:
//   1. right after the value's producer has run, it waits for that device,
//      copies the value into the host copy and calls produced();
//   2. between any two steps it calls progress() (MPI advances non-blocking
//      collectives only inside MPI calls);
//   3. before the first step that reads the value, it calls needed() and
//      copies the host copy back to the device: from then on every reader
//      sees what the exchange left there.
// A run with no exchange set pays nothing for this.
//
// The device path (optional): values the exchange takes on their device
// (on_device()) get no host copy: produced_on_device() right after the
// producer was launched (not waited for), needed_on_device() before the
// first reader is launched, each with where the value lives; the exchange
// works in the device's own order (NCCL on a CUDA device's stream, through
// the plugin's native handles: backend_api.h, ABI 1.6).
#pragma once

#include <ampx/exec/execution_plan.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/plugins/buffer.hpp>
#include <ampx/plugins/device.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace ampx {

// Where an exchanged value lives on its home device: `bytes` bytes of
// `buffer` from `offset`, valid from produced_on_device() until the run
// ends.
struct DeviceSlot {
  const plugins::Device* device = nullptr;
  const plugins::Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

class ValueExchange {
 public:
  virtual ~ValueExchange() = default;
  // Value i (the order set_exchange() was given) has been produced; `bytes`
  // is its host copy, which the exchange may work on (and keep) until
  // needed(i) returns.
  virtual void produced(size_t i, std::span<std::byte> bytes) = 0;
  // Called between steps while anything was produced and not yet needed.
  virtual void progress() = 0;
  // Value i is about to be read: `bytes` (its host copy, as produced() got
  // it) must hold the value to use when this returns.
  virtual void needed(size_t i, std::span<std::byte> bytes) = 0;
  // Where value i's host copy should live, asked once when the exchange is
  // set: memory of the exchange's own, of exactly `bytes` bytes, that it
  // keeps alive while it is set (a gradient bucket: the executor's copies
  // then land where the all-reduce reads them); an empty span: the
  // executor keeps a buffer of its own.
  virtual std::span<std::byte> host_copy(size_t /*i*/, size_t /*bytes*/) { return {}; }
  // The device path, asked once when the exchange is set (before
  // host_copy), with each value's home device: true for a value the
  // exchange takes there. An empty answer (the default): none.
  virtual std::vector<bool> on_device(std::span<const plugins::Device* const> /*homes*/) {
    return {};
  }
  virtual void produced_on_device(size_t /*i*/, const DeviceSlot& /*slot*/) {}
  virtual void needed_on_device(size_t /*i*/, const DeviceSlot& /*slot*/) {}
};

// One value to exchange. A group's values are made current together:
// before the first step that reads any of them after the last of them is
// produced (a bucket of gradients, read by the optimizer, while a probe
// that reads one earlier sees the rank's own); a value alone in its group
// before its first reader. A value of a group that no step reads after the
// group is made (a step output) is made current with the group's first
// reader.
struct ExchangedValue {
  ValueId value = kNone;
  int group = 0;
};

// Where a run of `plan` hands each of `values` over: `after[s]` lists the
// values (indexes into `values`) produced by step s, `before[s]` those made
// current before step s. Throws std::invalid_argument naming a value that
// no step of the run produces (a graph input, a constant, a value computed
// at load) or whose group no step reads after it is produced.
struct ExchangePoints {
  std::vector<std::vector<size_t>> after;
  std::vector<std::vector<size_t>> before;
};
ExchangePoints exchange_points(const ExecutionPlan& plan, std::span<const ExchangedValue> values);

// What an executor keeps of set_exchange(): the exchange, its points and
// the host copies; the executor supplies the device side (how to copy a
// value to and from the host).
class ExchangeHooks {
 public:
  ExchangeHooks() = default;
  // `devices`: the executor's, indexed by plan.home.
  ExchangeHooks(const ExecutionPlan& plan, std::span<const ExchangedValue> values,
                ValueExchange* exchange, std::span<const plugins::Device* const> devices)
      : exchange_(exchange) {
    if (!exchange_) return;
    points_ = exchange_points(plan, values);
    owned_.resize(values.size());
    std::vector<const plugins::Device*> homes;
    for (const ExchangedValue& v : values)
      homes.push_back(devices[static_cast<size_t>(plan.home[static_cast<size_t>(v.value)])]);
    on_device_ = exchange_->on_device(homes);
    on_device_.resize(values.size(), false);
    for (size_t i = 0; i < values.size(); ++i) {
      values_.push_back(values[i].value);
      const size_t bytes = plan.graph->value(values[i].value).byte_size();
      if (on_device_[i]) {
        host_.emplace_back();
        continue;
      }
      std::span<std::byte> at = exchange_->host_copy(i, bytes);
      if (at.size() != bytes) {
        owned_[i].resize(bytes);
        at = owned_[i];
      }
      host_.push_back(at);
    }
  }
  bool active() const { return exchange_ != nullptr; }
  // Before step s: progress, and every value s reads first made current
  // (`to_device(value, bytes)`; on the device path `locate(value)`, its
  // DeviceSlot).
  template <class ToDevice, class Locate>
  void before_step(size_t s, ToDevice&& to_device, Locate&& locate) {
    if (!exchange_) return;
    if (outstanding_ > 0) exchange_->progress();
    for (size_t i : points_.before[s]) {
      if (on_device_[i]) {
        exchange_->needed_on_device(i, locate(values_[i]));
      } else {
        exchange_->needed(i, host_[i]);
        to_device(values_[i], std::span<const std::byte>(host_[i]));
      }
      --outstanding_;
    }
  }
  // After step s: every value it produced copied out
  // (`to_host(value, bytes)`, which waits for the device) and handed over,
  // or on the device path handed over where it is.
  template <class ToHost, class Locate>
  void after_step(size_t s, ToHost&& to_host, Locate&& locate) {
    if (!exchange_) return;
    for (size_t i : points_.after[s]) {
      ++outstanding_;
      if (on_device_[i]) {
        exchange_->produced_on_device(i, locate(values_[i]));
        continue;
      }
      to_host(values_[i], std::span<std::byte>(host_[i]));
      exchange_->produced(i, host_[i]);
    }
  }

 private:
  ValueExchange* exchange_ = nullptr;
  std::vector<ValueId> values_;
  ExchangePoints points_;
  std::vector<bool> on_device_;                // per value: the device path
  std::vector<std::span<std::byte>> host_;     // each value's host copy (none on the device path)
  std::vector<std::vector<std::byte>> owned_;  // those the exchange did not place
  size_t outstanding_ = 0;
};

}  // namespace ampx
