// The training step's named slots (TrainingInput, TrainingOutput): each
// name resolves to the position that holds it, checked against what sits
// there (the value's name, type and producer), every position is a slot
// or a state binding exactly once, and the check itself fails when two
// slots are swapped.
#include <ampx/ir/builder.hpp>
#include <ampx/train/training_graph.hpp>

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <utility>

using namespace ampx;
using namespace ampx::train;

namespace {

// Two Dropouts (two seeds, whose order matters), Adam (hyper [5]) and the
// overflow probe: every slot is present.
Graph two_dropouts() {
  GraphBuilder b("two-dropouts", 7);
  ValueId x = b.input("input", DType::kF32, {8, 12});
  x = b.dense("fc1", x, 16);
  x = b.add(OpType::kDropout, "drop1", {x}, {{"ratio", 0.1}});
  x = b.unary(OpType::kTanh, "act", x);
  x = b.add(OpType::kDropout, "drop2", {x}, {{"ratio", 0.2}});
  x = b.dense("fc2", x, 4);
  b.output(x);
  return std::move(b).build();
}

TrainingGraphOptions all_slots() {
  TrainingGraphOptions o;
  o.optimizer.kind = OptimizerKind::kAdam;
  o.optimizer.lr = 1e-3;
  o.diagnose_overflow = true;
  return o;
}

std::string producer_of(const Graph& g, ValueId v) {
  const NodeId p = g.value(v).producer;
  return p == kNone ? "" : g.node(p).name;
}

// Every way in which `tg`'s slots disagree with its step, one line each
// (empty: they agree).
std::vector<std::string> slot_mismatches(const TrainingGraph& tg, const Graph& forward) {
  std::vector<std::string> bad;
  const Graph& s = tg.step;
  const auto expect_input = [&](TrainingInput slot, size_t k, const std::string& name,
                                const TensorType& type) {
    const ValueId v = s.inputs()[tg.input(slot, k)];
    if (s.value(v).name != name || s.value(v).type != type)
      bad.push_back(std::string(training_input_name(slot)) + " " + std::to_string(k) +
                    " is input '" + s.value(v).name + "', expected '" + name + "'");
  };
  for (size_t k = 0; k < forward.inputs().size(); ++k)
    expect_input(TrainingInput::kData, k, forward.value(forward.inputs()[k]).name,
                 forward.value(forward.inputs()[k]).type);
  const TensorType& pred = forward.value(forward.outputs()[0]).type;
  expect_input(TrainingInput::kLabels, 0, "labels", {DType::kI64, {pred.shape[0]}});
  expect_input(TrainingInput::kHyper, 0, "hyper", {DType::kF32, {5}});
  expect_input(TrainingInput::kLossScale, 0, "loss_scale", {DType::kF32, {}});
  for (size_t k = 0; k < tg.dropout_nodes.size(); ++k)
    expect_input(TrainingInput::kDropoutSeed, k, "dropout_seed/" + tg.dropout_nodes[k],
                 {DType::kI64, {1}});
  const auto expect_output = [&](TrainingOutput slot, const std::string& producer,
                                 const TensorType& type) {
    const ValueId v = s.outputs()[tg.output(slot)];
    if (producer_of(s, v) != producer || s.value(v).type != type)
      bad.push_back(std::string(training_output_name(slot)) + " is output '" + s.value(v).name +
                    "' of '" + producer_of(s, v) + "', expected one of '" + producer + "'");
  };
  expect_output(TrainingOutput::kLoss, "loss", {DType::kF32, {}});
  expect_output(TrainingOutput::kPrediction, producer_of(forward, forward.outputs()[0]), pred);
  expect_output(TrainingOutput::kGuard, "update_guard", {DType::kF32, {2}});
  if (tg.has_output(TrainingOutput::kOverflow))
    expect_output(TrainingOutput::kOverflow, "overflow_probe",
                  {DType::kF32, {static_cast<int64_t>(tg.probes.size()), 3}});
  // Every position is one slot's or one state tensor's, and the slots'
  // inputs come before the state's.
  std::vector<int> in_uses(s.inputs().size(), 0), out_uses(s.outputs().size(), 0);
  for (const SlotRange& r : tg.input_slots)
    for (size_t i = r.first; i < r.first + r.count; ++i) ++in_uses.at(i);
  for (const SlotRange& r : tg.output_slots)
    for (size_t i = r.first; i < r.first + r.count; ++i) ++out_uses.at(i);
  for (const StateEntry& e : tg.state) {
    ++in_uses.at(e.binding.input);
    ++out_uses.at(e.binding.output);
    if (e.binding.input < tg.data_inputs)
      bad.push_back("state '" + e.name + "' is among the data inputs");
  }
  for (size_t i = 0; i < in_uses.size(); ++i)
    if (in_uses[i] != 1)
      bad.push_back("input " + std::to_string(i) + " is used " + std::to_string(in_uses[i]) +
                    " times");
  for (size_t i = 0; i < out_uses.size(); ++i)
    if (out_uses[i] != 1)
      bad.push_back("output " + std::to_string(i) + " is used " + std::to_string(out_uses[i]) +
                    " times");
  return bad;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(TrainingSlots, EachNameResolvesToThePositionThatHoldsIt) {
  const Graph forward = two_dropouts();
  const TrainingGraph tg = build_training_graph(forward, all_slots());
  EXPECT_EQ(tg.dropout_nodes, (std::vector<std::string>{"drop1", "drop2"}));
  EXPECT_EQ(tg.input_count(TrainingInput::kData), 1u);
  EXPECT_EQ(tg.input_count(TrainingInput::kDropoutSeed), 2u);
  ASSERT_TRUE(tg.has_output(TrainingOutput::kOverflow));
  const std::vector<std::string> bad = slot_mismatches(tg, forward);
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(TrainingSlots, WithoutDropoutOrDiagnosticsThoseSlotsAreEmpty) {
  GraphBuilder b("plain", 3);
  ValueId x = b.input("x", DType::kF32, {4, 6});
  b.output(b.dense("fc", x, 3));
  const Graph forward = std::move(b).build();
  TrainingGraphOptions o = all_slots();
  o.diagnose_overflow = false;
  const TrainingGraph tg = build_training_graph(forward, o);
  EXPECT_EQ(tg.input_count(TrainingInput::kDropoutSeed), 0u);
  EXPECT_FALSE(tg.has_output(TrainingOutput::kOverflow));
  EXPECT_TRUE(slot_mismatches(tg, forward).empty()) << joined(slot_mismatches(tg, forward));
  try {
    (void)tg.output(TrainingOutput::kOverflow);
    ADD_FAILURE() << "an absent output resolved";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "the training step has no 'overflow' output");
  }
  try {
    (void)tg.input(TrainingInput::kDropoutSeed, 0);
    ADD_FAILURE() << "an absent input resolved";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "the training step has 0 'dropout_seed' inputs, not a number 1");
  }
}

// The check above can fail: two slots swapped on purpose (inputs of
// different types, outputs of different producers) are each named.
TEST(TrainingSlots, TwoSwappedSlotsAreFound) {
  const Graph forward = two_dropouts();
  const TrainingGraph good = build_training_graph(forward, all_slots());
  TrainingGraph swapped_in = good;
  std::swap(swapped_in.input_slots[static_cast<size_t>(TrainingInput::kHyper)],
            swapped_in.input_slots[static_cast<size_t>(TrainingInput::kLossScale)]);
  const std::string in = joined(slot_mismatches(swapped_in, forward));
  EXPECT_NE(in.find("hyper 0 is input 'loss_scale'"), std::string::npos) << in;
  EXPECT_NE(in.find("loss_scale 0 is input 'hyper'"), std::string::npos) << in;
  TrainingGraph swapped_out = good;
  std::swap(swapped_out.output_slots[static_cast<size_t>(TrainingOutput::kLoss)],
            swapped_out.output_slots[static_cast<size_t>(TrainingOutput::kGuard)]);
  const std::string out = joined(slot_mismatches(swapped_out, forward));
  EXPECT_NE(out.find("loss is output"), std::string::npos) << out;
  EXPECT_NE(out.find("guard is output"), std::string::npos) << out;
  // Two seeds swapped: same type, told apart by their node.
  TrainingGraph seeds = good;
  std::swap(seeds.dropout_nodes[0], seeds.dropout_nodes[1]);
  EXPECT_FALSE(slot_mismatches(seeds, forward).empty());
}

}  // namespace
