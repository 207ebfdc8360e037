// The memory check (exec/memory_budget.hpp): a plan's figures against a
// limit, each device's memory and the host's pool, and the executor's
// needs worked out before it allocates anything.
#include <ampx/exec/executor.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/session.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ampx;
using ::testing::HasSubstr;

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

std::string refusal(std::span<const DeviceMemoryNeed> needs, std::span<const DeviceMemory> devs,
                    const MemoryLimit& limit, uint64_t host_available) {
  try {
    check_memory(needs, devs, limit, host_available);
  } catch (const MemoryError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  return "";
}

TEST(MemoryBudget, TheLimitCountsEveryDeviceAndTheHostTensors) {
  const DeviceMemoryNeed needs[] = {{.arena_bytes = 3 * kGiB, .constant_bytes = kGiB},
                                    {.arena_bytes = kGiB, .staging_bytes = kGiB}};
  const DeviceMemory devs[] = {{"cuda:0", MemoryPool::kDevice, 80 * kGiB},
                               {"cpu_ref:0", MemoryPool::kHost, 0}};
  MemoryLimit limit{.max_bytes = 7 * kGiB, .origin = "--max-memory", .host_bytes = 2 * kGiB};
  EXPECT_EQ(refusal(needs, devs, limit, 0),
            "the plan needs 8.0 GiB in all (cuda:0: 4.0 GiB, cpu_ref:0: 2.0 GiB, input and "
            "output tensors: 2.0 GiB), more than --max-memory allows (7.0 GiB)");
  limit.max_bytes = 8 * kGiB;
  EXPECT_EQ(refusal(needs, devs, limit, 0), "");
}

TEST(MemoryBudget, ADeviceIsCheckedAgainstItsOwnMemory) {
  const DeviceMemoryNeed needs[] = {{.arena_bytes = 20 * kGiB, .constant_bytes = 5 * kGiB}};
  const DeviceMemory gpu[] = {{"vulkan:0", MemoryPool::kDevice, 24 * kGiB}};
  EXPECT_EQ(refusal(needs, gpu, {}, 0),
            "the plan needs 25.0 GiB on vulkan:0 (arena 20.0 GiB, weights 5.0 GiB), more than "
            "its 24.0 GiB of memory");
  const DeviceMemory unknown[] = {{"other:0", MemoryPool::kDevice, 0}};
  EXPECT_EQ(refusal(needs, unknown, {}, 0), "") << "0 is unknown, not checked";
}

TEST(MemoryBudget, HostDevicesStagingAndTensorsShareTheHostPool) {
  // Each fits alone; together they pass what the host has.
  const DeviceMemoryNeed needs[] = {{.arena_bytes = 8 * kGiB},
                                    {.arena_bytes = 8 * kGiB},
                                    {.arena_bytes = kGiB, .staging_bytes = 2 * kGiB}};
  const DeviceMemory devs[] = {{"cpu_ref:0", MemoryPool::kHost, 0},
                               {"onednn:0", MemoryPool::kHost, 0},
                               {"vulkan:0", MemoryPool::kDevice, 8 * kGiB}};
  const MemoryLimit limit{.host_bytes = 4 * kGiB};
  const std::string msg = refusal(needs, devs, limit, 21 * kGiB);
  EXPECT_THAT(msg, HasSubstr("the plan needs 22.0 GiB of host memory (cpu_ref:0: arena 8.0 GiB"));
  EXPECT_THAT(msg, HasSubstr("vulkan:0's copies: 2.0 GiB; input and output tensors: 4.0 GiB"));
  EXPECT_THAT(msg, HasSubstr("more than the 21.0 GiB this machine has available"));
  EXPECT_EQ(refusal(needs, devs, limit, 22 * kGiB), "");
}

// A Relu on [2^31 x 2] f32: 16 GiB in, 16 GiB out. Its needs are known
// without a device call, and the executor refuses it before it allocates.
TEST(MemoryBudget, TheExecutorRefusesBeforeAllocating) {
  GraphBuilder b("big");
  const ValueId x = b.input("x", DType::kF32, {int64_t{1} << 31, 2});
  b.output(b.add(OpType::kRelu, "relu", {x}));
  const Graph g = std::move(b).build();
  plugins::PluginHostOptions opts;
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  const plugins::Device* dev[] = {&host.device("cpu_ref:0")};
  const auto needs = Executor::memory_needs(g, dev);
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].arena_bytes, 32 * kGiB) << "x and y live together";
  EXPECT_EQ(needs[0].constant_bytes, 0u);
  try {
    Executor exec(g, *dev[0], {}, {.memory = {.max_bytes = kGiB, .origin = "the test's limit"}});
    ADD_FAILURE() << "not refused";
  } catch (const MemoryError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the plan needs 32.0 GiB in all (cpu_ref:0: 32.0 GiB), more "
                                    "than the test's limit allows (1.0 GiB)"));
  }
}

TEST(MemoryBudget, NeedsMatchWhatTheExecutorHolds) {
  const Graph g = make_builtin_model("cnn");
  plugins::PluginHostOptions opts;
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  const plugins::Device* dev[] = {&host.device("cpu_ref:0")};
  const auto needs = Executor::memory_needs(g, dev);
  const Executor exec(g, *dev[0]);
  EXPECT_EQ(needs[0].arena_bytes, exec.stats().arena_bytes);
  EXPECT_EQ(needs[0].constant_bytes, exec.stats().constant_bytes);
  EXPECT_EQ(needs[0].staging_bytes, 0u);
}

TEST(MemoryBudget, SessionCompileTakesTheLimit) {
  const Graph g = make_builtin_model("mlp");
  Session tight({.devices = "cpu_ref:0", .use_costs = false, .max_memory_bytes = 4096});
  const PlannedModel planned = tight.plan(g, {});
  try {
    (void)tight.compile(planned);
    ADD_FAILURE() << "not refused";
  } catch (const MemoryError& e) {
    EXPECT_THAT(e.what(), HasSubstr("more than SessionOptions::max_memory_bytes allows (4.0 KiB)"));
  }
  Session roomy({.devices = "cpu_ref:0", .use_costs = false, .max_memory_bytes = kGiB});
  EXPECT_NO_THROW((void)roomy.compile(roomy.plan(g, {})));
}

TEST(MemoryBudget, BytesText) {
  EXPECT_EQ(bytes_text(100), "100 B");
  EXPECT_EQ(bytes_text(4096), "4.0 KiB");
  EXPECT_EQ(bytes_text(3 * kGiB / 2), "1.5 GiB");
}

}  // namespace
