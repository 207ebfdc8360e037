// Lowering as a value: made from names alone (no plugin host, no device),
// printed, and holding the one copy rule placement prices (plan_copies).
#include <ampx/amp/placement.hpp>
#include <ampx/exec/lower.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace ampx;
using ::testing::HasSubstr;

namespace {

// x -> mm (device 0, reads a weight computed at load) -> r, a (device 1,
// both read mm); outputs a and mm.
Graph two_device_graph() {
  GraphBuilder b("two");
  const ValueId x = b.input("x", DType::kF32, {4, 8});
  const ValueId w = b.random_weight("w", {8, 3}, 0.5f);
  const ValueId w_pos = b.add(OpType::kRelu, "w_pos", {w});
  const ValueId mm = b.add(OpType::kMatMul, "mm", {x, w_pos});
  const ValueId r = b.add(OpType::kRelu, "r", {mm});
  const ValueId a = b.add(OpType::kAdd, "a", {mm, r});
  b.output(a);
  b.output(mm);
  Graph g = std::move(b).build();
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const std::string& name = g.node(id).name;
    g.node(id).device = name == "r" || name == "a" ? 1 : 0;
  }
  return g;
}

NodeId node_named(const Graph& g, const std::string& name) {
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id)
    if (g.node(id).name == name) return id;
  throw std::logic_error(name);
}

TEST(Lower, StepsHomesLoadTimeValuesAndOneSharedCopyWithoutADevice) {
  const Graph g = two_device_graph();
  const LoweringDevice two_plugins[] = {{"a:0", "a"}, {"b:0", "b"}};
  const ExecutionPlan p = lower(g, two_plugins);
  ASSERT_EQ(p.load_time_nodes, std::vector<NodeId>{node_named(g, "w_pos")});
  ASSERT_EQ(p.steps.size(), 4u);  // mm, copy of mm, r, a
  EXPECT_EQ(p.kernels(), 3);
  ASSERT_EQ(p.copies(), 1) << "one copy per value and device, shared by r and a";
  const auto* copy = std::get_if<CopyStep>(&p.steps[1]);
  ASSERT_NE(copy, nullptr) << "the copy comes right before its first reader";
  EXPECT_EQ(g.value(copy->value).name, "mm");
  EXPECT_EQ(copy->from, 0);
  EXPECT_EQ(copy->to, 1);
  EXPECT_TRUE(copy->staged) << "two plugins: through host memory";
  EXPECT_EQ(p.needs[1].staging_bytes, g.value(copy->value).byte_size());
  EXPECT_EQ(p.home[static_cast<size_t>(g.inputs()[0])], 0) << "x lives where it is first read";
  const ValueId w_pos = g.node(node_named(g, "w_pos")).outputs[0];
  EXPECT_TRUE(p.known_at_load[static_cast<size_t>(w_pos)]);
  EXPECT_EQ(p.arena_offset[0][static_cast<size_t>(w_pos)], -1) << "not in the arena";
  EXPECT_EQ(p.needs[1].constant_bytes, 0u) << "device 1 reads nothing known at load";
  EXPECT_GT(p.needs[0].arena_bytes, 0u);
  EXPECT_GE(p.arena_offset[1][static_cast<size_t>(copy->value)], 0) << "the copy's target";

  const LoweringDevice one_plugin[] = {{"a:0", "a"}, {"a:1", "a"}};
  EXPECT_FALSE(std::get<CopyStep>(lower(g, one_plugin).steps[1]).staged);

  // The copy rule placement prices is this one.
  const std::vector<CopyRecord> priced = plan_copies(g);
  ASSERT_EQ(priced.size(), 1u);
  EXPECT_EQ(priced[0].value, "mm");
  EXPECT_EQ(priced[0].from, copy->from);
  EXPECT_EQ(priced[0].to, copy->to);

  const std::string text = to_text(p);
  EXPECT_THAT(text, HasSubstr("4 steps (3 kernels, 1 copies)"));
  EXPECT_THAT(text, HasSubstr("Copy mm a:0 -> b:0 (through host)"));
  EXPECT_THAT(text, HasSubstr("Relu w_pos on a:0"));
}

TEST(Lower, RefusesWhatCannotRun) {
  const Graph g = two_device_graph();
  const LoweringDevice one[] = {{"a:0", "a"}};
  EXPECT_THAT([&] { (void)lower(g, one); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("node 'r' is placed on device 1, but 1 device(s) were given")));
  EXPECT_NO_THROW((void)lower(g, one, {.placement = NodePlacement::kAllOnFirst}));
  const StateBinding mismatched[] = {{0, 0}};  // x f32[4,8] <- a f32[4,3]
  EXPECT_THAT(
      [&] { (void)lower(g, one, {.state = mismatched, .placement = NodePlacement::kAllOnFirst}); },
      ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("differ in type")));
}

TEST(Lower, StateInputsGetABufferOfTheirOwn) {
  GraphBuilder b("state");
  const ValueId s = b.input("s", DType::kF32, {4});
  const ValueId x = b.input("x", DType::kF32, {4});
  b.output(b.add(OpType::kAdd, "next", {s, x}));
  const Graph g = std::move(b).build();
  const LoweringDevice one[] = {{"a:0", "a"}};
  const StateBinding state[] = {{0, 0}};
  const ExecutionPlan p = lower(g, one, {.state = state});
  EXPECT_EQ(p.arena_offset[0][static_cast<size_t>(s)], -1);
  EXPECT_GE(p.arena_offset[0][static_cast<size_t>(x)], 0);
  EXPECT_EQ(p.needs[0].state_bytes, 16u);
  EXPECT_THAT(to_text(p), HasSubstr("state s <- next:"));
}

}  // namespace
