// The NCCL exchange's logic without a GPU, under mpirun with 2 ranks:
// NcclStepExchange (frontend/train/src/nccl_step_exchange.cpp) on c_native,
// a host-memory test plugin whose ABI 1.6 native handles claim CUDA, with
// a stand-in Module whose "NCCL" sums host memory over MPI. What this
// checks is ampx's part: the path agreed over the ranks, the buckets as
// device buffers (offsets, strict order, 16-bit buffers), the copies in
// and out through the plugin, the communicator's bootstrap and the step's
// figures; what it cannot check is NCCL and CUDA themselves (device-check).
#include <gtest/gtest.h>
#include <ampx/dist/communicator.hpp>
#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/half.hpp>
#include <ampx/plugins/plugin_host.hpp>

#include <cstring>

#include "nccl_step_exchange.hpp"
#include "step_exchange.hpp"

namespace ampx::nccl {
namespace {

class HostMarker final : public Marker {
 public:
  void record(void*) override {}
  bool reached() override { return true; }  // the stand-in's work is done when enqueued
};

// NCCL's part on host memory: the "device address" is c_native's buffer.
class HostComm final : public Comm {
 public:
  explicit HostComm(dist::Communicator& mpi) : mpi_(mpi) {}
  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  void allreduce_sum(void* data, size_t count, WireType type, void*) override {
    ++allreduces;
    if (type == WireType::kF32) {
      mpi_.allreduce_sum(std::span<float>(static_cast<float*>(data), count));
      return;
    }
    // As NCCL with 2 ranks: one 16-bit rounding of the sum (one hop).
    mpi_.allreduce_sum(std::span<uint16_t>(static_cast<uint16_t*>(data), count),
                       type == WireType::kBF16 ? DType::kBF16 : DType::kF16);
  }
  void narrow(const float* src, void* dst, size_t n, WireType to, void*) override {
    auto* d = static_cast<uint16_t*>(dst);
    for (size_t i = 0; i < n; ++i)
      d[i] = to == WireType::kBF16 ? float_to_bf16_bits(src[i]) : float_to_f16_bits(src[i]);
  }
  void widen(const void* src, float* dst, size_t n, WireType from, void*) override {
    const auto* s = static_cast<const uint16_t*>(src);
    for (size_t i = 0; i < n; ++i)
      dst[i] = from == WireType::kBF16 ? bf16_bits_to_float(s[i]) : f16_bits_to_float(s[i]);
  }
  std::unique_ptr<Marker> marker() override { return std::make_unique<HostMarker>(); }
  std::string async_error() override { return {}; }
  void abort() noexcept override {}
  inline static int allreduces = 0;

 private:
  dist::Communicator& mpi_;
};

class HostModule final : public Module {
 public:
  explicit HostModule(dist::Communicator& mpi) : mpi_(mpi) {}
  std::string version() const override { return "host stand-in"; }
  int device_count() override { return 1; }
  UniqueId unique_id() override {
    UniqueId id{};
    id[0] = std::byte{42};
    return id;
  }
  std::unique_ptr<Comm> init_rank(int ranks, int rank, const UniqueId& id, int ordinal,
                                  InitOptions) override {
    // The id rank 0 made reached every rank (the bootstrap's broadcast).
    EXPECT_EQ(id[0], std::byte{42});
    EXPECT_EQ(ranks, mpi_.size());
    EXPECT_EQ(rank, mpi_.rank());
    EXPECT_EQ(ordinal, 0);
    return std::make_unique<HostComm>(mpi_);
  }
  std::vector<std::unique_ptr<Comm>> init_all(std::span<const int>, InitOptions) override {
    throw std::logic_error("not used");
  }

 private:
  dist::Communicator& mpi_;
};

std::vector<float> values(size_t n, int seed) {
  std::vector<float> v(n);
  uint32_t s = 2463534242u + static_cast<uint32_t>(seed) * 7919u;
  for (float& x : v) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x = (static_cast<float>(s % 20001) - 10000.0f) * 1e-3f;
  }
  return v;
}

void run_step(DType wire) {
  dist::Communicator buckets_comm(dist::MpiRuntime(), {}), sync(dist::MpiRuntime(), {}),
      stand_in(dist::MpiRuntime(), {});
  HostModule module(stand_in);
  plugins::PluginHostOptions o;
  o.use_env_path = false;
  o.own_dirs = {AMPX_NATIVE_PLUGIN_DIR};
  o.preflight = false;
  plugins::PluginHost host(o);
  const plugins::Device* dev = host.find_device("c_native:0");
  ASSERT_NE(dev, nullptr);
  // Buckets of 64 KiB: the first (the last gradients) alone, one too large
  // for any bucket, two sharing one.
  std::vector<train::BucketedGradient> grads;
  for (int64_t n : {3000, 70000, 7, 1000, 17, 5})
    grads.push_back({"w" + std::to_string(grads.size()), n, wire});
  const auto members = train::plan_buckets(grads, 64 * 1024);
  ASSERT_GE(members.size(), 3u);
  train::NcclState state{sync, std::chrono::milliseconds(10000), nullptr, {}, &module};
  auto exchange = train::make_nccl_step_exchange(
      state, train::make_step_exchange({buckets_comm, sync}, grads, members, std::nullopt), grads,
      members);

  std::vector<const plugins::Device*> homes(grads.size(), dev);
  const std::vector<bool> on = exchange->on_device(homes);
  ASSERT_EQ(on, std::vector<bool>(grads.size(), true));
  std::vector<plugins::Buffer> buffers;
  std::vector<std::vector<float>> mine, sum;
  for (size_t g = 0; g < grads.size(); ++g) {
    mine.push_back(values(static_cast<size_t>(grads[g].elements), sync.rank() * 100 + int(g)));
    // What the host path's bucket leaves: the same sum, the same roundings.
    sum.push_back(mine.back());
    if (wire == DType::kF32) {
      sync.allreduce_sum(std::span<float>(sum.back()));
    } else {
      std::vector<uint16_t> h(sum.back().size());
      for (size_t i = 0; i < h.size(); ++i)
        h[i] = wire == DType::kBF16 ? float_to_bf16_bits(sum.back()[i])
                                    : float_to_f16_bits(sum.back()[i]);
      sync.allreduce_sum(std::span<uint16_t>(h), wire);
      for (size_t i = 0; i < h.size(); ++i)
        sum.back()[i] = wire == DType::kBF16 ? bf16_bits_to_float(h[i]) : f16_bits_to_float(h[i]);
    }
    // Each gradient at an offset of a larger buffer, as in an arena.
    buffers.push_back(dev->allocate(mine.back().size() * 4 + 128));
    dev->copy_to_device(buffers.back(), 64, std::as_bytes(std::span(mine.back())));
  }
  const auto slot = [&](size_t g) { return DeviceSlot{dev, &buffers[g], 64, mine[g].size() * 4}; };
  const int before = HostComm::allreduces;
  exchange->begin_step();
  for (size_t g = grads.size(); g-- > 0;) {  // the backward pass: last layers first
    exchange->produced_on_device(g, slot(g));
    exchange->progress();
  }
  for (size_t g = 0; g < grads.size(); ++g) exchange->needed_on_device(g, slot(g));
  for (size_t g = 0; g < grads.size(); ++g) {
    std::vector<float> got(mine[g].size());
    dev->copy_to_host(std::as_writable_bytes(std::span(got)), buffers[g], 64);
    ASSERT_EQ(std::memcmp(got.data(), sum[g].data(), got.size() * 4), 0) << "gradient " << g;
  }
  const train::StepCommunication c = exchange->step_communication();
  EXPECT_EQ(c.buckets, static_cast<int>(members.size()));
  EXPECT_EQ(HostComm::allreduces - before, static_cast<int>(members.size()));
  uint64_t elements = 0;
  for (const auto& g : grads) elements += static_cast<uint64_t>(g.elements);
  EXPECT_EQ(c.wire_bytes, elements * (wire == DType::kF32 ? 4 : 2));
}

TEST(NcclStepExchange, DeviceBucketsSumAsTheHostPathF32) {
  run_step(DType::kF32);
}
TEST(NcclStepExchange, DeviceBucketsSumAsTheHostPathBF16) {
  run_step(DType::kBF16);
}
TEST(NcclStepExchange, DeviceBucketsSumAsTheHostPathF16) {
  run_step(DType::kF16);
}

}  // namespace
}  // namespace ampx::nccl
