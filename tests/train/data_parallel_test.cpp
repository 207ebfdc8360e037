// Data parallelism's pieces that need no MPI: the buckets, each rank's
// share of a batch, the options, the gradients a step's guard reads, and the
// executor's value exchange (exec/value_exchange.hpp) that hands them over,
// in both executors. The collectives themselves run in tests/dist.
#include "train_fixtures.hpp"

#include <ampx/exec/value_exchange.hpp>
#include <ampx/train/data_parallel.hpp>
#include <ampx/train/step_gradients.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

namespace ampx::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PlanBuckets, ReverseWeightOrderAFirstSmallBucketAndNoMixedDtypes) {
  const int64_t mib = (1 << 20) / 4;  // f32 elements in 1 MiB
  const std::vector<BucketedGradient> g{{"a", mib, DType::kF32},     {"b", 3 * mib, DType::kF32},
                                        {"c", mib / 2, DType::kF16}, {"d", mib / 2, DType::kF32},
                                        {"e", mib / 4, DType::kF32}, {"f", mib / 4, DType::kF32},
                                        {"g", mib / 4, DType::kF32}};
  // 25 MiB buckets: the first holds 1 MiB (g, f, e, d's half would pass it),
  // the dtype changes at c, a 3 MiB gradient joins a.
  EXPECT_THAT(plan_buckets(g, 25ull << 20),
              ElementsAre(ElementsAre(6, 5, 4), ElementsAre(3), ElementsAre(2), ElementsAre(1, 0)));
  // 2 MiB buckets: b (3 MiB) alone, then a.
  EXPECT_THAT(plan_buckets(g, 2ull << 20),
              ElementsAre(ElementsAre(6, 5, 4), ElementsAre(3), ElementsAre(2), ElementsAre(1),
                          ElementsAre(0)));
  // Buckets smaller than any gradient: one each.
  EXPECT_EQ(plan_buckets(g, 1).size(), g.size());
  EXPECT_TRUE(plan_buckets({}, 1).empty());
}

TEST(RankShare, ConsecutiveBalancedAndComplete) {
  for (int ranks = 1; ranks <= 5; ++ranks) {
    for (int64_t rows : {0, 1, 4, 7, 64, 203}) {
      int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const RowShare s = rank_share(rows, ranks, r);
        EXPECT_EQ(s.first, next) << rows << " rows, rank " << r << " of " << ranks;
        EXPECT_LE(std::abs(s.count - rows / ranks), 1);
        next += s.count;
      }
      EXPECT_EQ(next, rows);
    }
  }
}

TEST(DataParallelOptions, RefusesBadValues) {
  EXPECT_EQ(parse_allreduce_dtype("bf16"), AllreduceDtype::kBF16);
  EXPECT_EQ(allreduce_dtype_name(parse_allreduce_dtype("auto")), "auto");
  EXPECT_THROW(parse_allreduce_dtype("fp16"), std::invalid_argument);
  EXPECT_THROW(DataParallelOptions{.bucket_mb = 0}.validate(), std::invalid_argument);
  EXPECT_THROW(DataParallelOptions{.comm_timeout = std::chrono::milliseconds(0)}.validate(),
               std::invalid_argument);
  EXPECT_NO_THROW(DataParallelOptions{}.validate());
}

// Where ScalingExchange takes the values: host copies, or the device path
// (exec/value_exchange.hpp: DeviceSlot, as NCCL's exchange does), which
// here reads and writes the slot through the plugin's copies.
enum class ExchangePath { kHost, kDevice };

// An exchange that records the order of its calls and scales every value
// it is handed by `factor` when it is needed.
class ScalingExchange final : public ValueExchange {
 public:
  explicit ScalingExchange(float factor, ExchangePath path = ExchangePath::kHost)
      : factor_(factor), path_(path) {}
  std::vector<bool> on_device(std::span<const plugins::Device* const> homes) override {
    if (path_ == ExchangePath::kHost) return {};
    for (const plugins::Device* d : homes) EXPECT_NE(d, nullptr);
    return std::vector<bool>(homes.size(), true);
  }
  void produced_on_device(size_t i, const DeviceSlot& slot) override {
    events.push_back("produced " + std::to_string(i));
    EXPECT_EQ(slot.bytes % 4, 0u);
    EXPECT_LE(slot.offset + slot.bytes, slot.buffer->size());
  }
  void needed_on_device(size_t i, const DeviceSlot& slot) override {
    std::vector<std::byte> bytes(slot.bytes);
    slot.device->synchronize();
    slot.device->copy_to_host(bytes, *slot.buffer, slot.offset);
    needed(i, bytes);
    slot.device->copy_to_device(*slot.buffer, slot.offset, bytes);
  }
  void produced(size_t i, std::span<std::byte> bytes) override {
    events.push_back("produced " + std::to_string(i));
    EXPECT_EQ(bytes.size() % 4, 0u);
  }
  void progress() override { ++progress_calls; }
  void needed(size_t i, std::span<std::byte> bytes) override {
    events.push_back("needed " + std::to_string(i));
    for (size_t k = 0; k < bytes.size(); k += 4) {
      float v = 0;
      std::memcpy(&v, bytes.data() + k, 4);
      v *= factor_;
      std::memcpy(bytes.data() + k, &v, 4);
    }
  }
  std::vector<std::string> events;
  int progress_calls = 0;

 private:
  float factor_;
  ExchangePath path_;
};

struct ExchangeRun {
  std::vector<HostTensor> state;
  std::vector<std::string> events;
};

// One plain-SGD step (the update is w - lr g) of the small MLP, compiled
// in `mode`, its guard's gradients handed to an exchange that scales them.
ExchangeRun step_with_exchange(float factor, ExecutionMode mode, double lr,
                               ExchangePath path = ExchangePath::kHost) {
  Session session(testing::cpu_ref_only());
  TrainingGraphOptions options;
  options.optimizer.lr = lr;
  const TrainingGraph tg = build_training_graph(testing::small_mlp(), options);
  const PlannedModel planned = session.plan(tg.step, PlanRequest{.logging = PlanLogging::kQuiet});
  CompileOptions compile;
  compile.mode = mode;
  for (const StateEntry& e : tg.state) compile.state.push_back(e.binding);
  CompiledModel model = session.compile(planned, compile);
  for (size_t i = 0; i < tg.state.size(); ++i)
    model.executor().write_state(i, tg.state[i].initial.data);
  ScalingExchange exchange(factor, path);
  const std::vector<StepGradient> grads = step_gradients(*model.execution_plan().graph);
  EXPECT_EQ(grads.size(), 4u);  // fc1 and fc2, weights and biases
  std::vector<ExchangedValue> values;
  for (const StepGradient& g : grads) values.push_back({g.value, 0});
  model.executor().set_exchange(values, &exchange);

  const std::vector<HostTensor> in = testing::one_step_inputs(tg, testing::synthetic(16, 12, 4, 1),
                                                              hyper_tensor(options.optimizer, 1));
  model.run(in);
  ExchangeRun r{{}, exchange.events};
  for (size_t i = 0; i < tg.state.size(); ++i) r.state.push_back(model.executor().read_state(i));
  return r;
}

class ValueExchangeIn : public ::testing::TestWithParam<ExecutionMode> {};

// Scaling the gradients by 2 in needed() is the step at twice the learning
// rate: the update reads what the exchange left. Each value is produced
// before the group is needed, and all are needed together.
TEST_P(ValueExchangeIn, TheUpdateReadsWhatTheExchangeLeft) {
  const ExchangeRun doubled = step_with_exchange(2.0f, GetParam(), 0.05);
  const ExchangeRun faster = step_with_exchange(1.0f, GetParam(), 0.1);
  for (size_t i = 0; i < doubled.state.size(); ++i) {
    const std::vector<double> a = to_doubles(doubled.state[i]), b = to_doubles(faster.state[i]);
    for (size_t k = 0; k < a.size(); ++k)
      ASSERT_NEAR(a[k], b[k], 1e-6 * (1 + std::abs(b[k]))) << doubled.state[i].name;
  }
  const ExchangeRun plain = step_with_exchange(1.0f, GetParam(), 0.05);
  EXPECT_NE(testing::bytes_of(plain.state), testing::bytes_of(doubled.state));
  ASSERT_EQ(doubled.events.size(), 8u);
  for (size_t k = 0; k < 4; ++k) EXPECT_THAT(doubled.events[k], HasSubstr("produced"));
  for (size_t k = 4; k < 8; ++k) EXPECT_THAT(doubled.events[k], HasSubstr("needed"));
}

// The same through the device path: the executor hands over where each
// gradient lives (no host copy of its own) and the readers see what the
// exchange left there.
TEST_P(ValueExchangeIn, TheDevicePathHandsOverWhereTheValueLives) {
  const ExchangeRun doubled = step_with_exchange(2.0f, GetParam(), 0.05, ExchangePath::kDevice);
  const ExchangeRun faster = step_with_exchange(1.0f, GetParam(), 0.1, ExchangePath::kHost);
  for (size_t i = 0; i < doubled.state.size(); ++i) {
    const std::vector<double> a = to_doubles(doubled.state[i]), b = to_doubles(faster.state[i]);
    for (size_t k = 0; k < a.size(); ++k)
      ASSERT_NEAR(a[k], b[k], 1e-6 * (1 + std::abs(b[k]))) << doubled.state[i].name;
  }
  ASSERT_EQ(doubled.events.size(), 8u);
  for (size_t k = 0; k < 4; ++k) EXPECT_THAT(doubled.events[k], HasSubstr("produced"));
  for (size_t k = 4; k < 8; ++k) EXPECT_THAT(doubled.events[k], HasSubstr("needed"));
}

INSTANTIATE_TEST_SUITE_P(Modes, ValueExchangeIn,
                         ::testing::Values(ExecutionMode::kCompiled, ExecutionMode::kEager));

TEST(ValueExchange, RefusesValuesNoStepComputes) {
  Session session(testing::cpu_ref_only());
  const TrainingGraph tg = build_training_graph(testing::small_mlp(), {});
  const PlannedModel planned = session.plan(tg.step, PlanRequest{.logging = PlanLogging::kQuiet});
  CompiledModel model = session.compile(planned);
  ScalingExchange exchange(1.0f);
  const Graph& g = *model.execution_plan().graph;
  try {
    const std::vector<ExchangedValue> input{{g.inputs()[0], 0}};
    model.executor().set_exchange(input, &exchange);
    ADD_FAILURE() << "a graph input was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not computed by a step of the run"));
  }
  // A graph output nothing reads after it is made.
  try {
    const std::vector<ExchangedValue> output{{g.outputs()[0], 0}};
    model.executor().set_exchange(output, &exchange);
    ADD_FAILURE() << "a value no step reads was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not read after"));
  }
}

}  // namespace
}  // namespace ampx::train
