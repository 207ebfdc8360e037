// The autodiff pass as a graph transformation: what it adds, how it names
// and marks backward nodes, and how it fails.
#include <ampx/amp/planner.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/ir/verifier.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/train/autodiff.hpp>

#include <gtest/gtest.h>

#include <cstring>

#include "grad_check.hpp"

using namespace ampx;

namespace {

ValueId scalar_one(Graph& g) {
  std::vector<std::byte> bytes(4);
  const float one = 1.0f;
  std::memcpy(bytes.data(), &one, 4);
  return g.add_constant("seed", {DType::kF32, {}}, std::move(bytes));
}

// x -> Erf -> ReduceSum: Erf has no gradient rule.
TEST(Autodiff, AnOpWithoutARuleOnThePathIsAnErrorNamingTheNode) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {3});
  const ValueId e = b.add(OpType::kErf, "the_erf", {x});
  const ValueId loss = b.add(OpType::kReduceSum, "loss", {e}, {{"keepdims", int64_t{0}}});
  b.output(loss);
  Graph g = std::move(b).build();
  const std::vector<ValueId> wrt{x};
  try {
    train::append_gradients(g, loss, scalar_one(g), wrt);
    FAIL() << "no error";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'the_erf' (Erf): no gradient rule"),
              std::string::npos)
        << e.what();
  }
}

TEST(Autodiff, AnOpOffThePathNeedsNoRule) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {3});
  const ValueId w = b.input("w", DType::kF32, {3});
  const ValueId side = b.add(OpType::kErf, "side", {w});  // no rule, but w is not trained
  const ValueId loss = b.add(OpType::kReduceSum, "loss", {b.add(OpType::kMul, "m", {x, side})},
                             {{"keepdims", int64_t{0}}});
  b.output(loss);
  Graph g = std::move(b).build();
  const std::vector<ValueId> wrt{x};
  const auto grads = train::append_gradients(g, loss, scalar_one(g), wrt);
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(g.value(grads[0]).type, g.value(x).type);
}

TEST(Autodiff, BackwardNodesAreNamedAndMarkedAfterTheirForwardNode) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {2, 4});
  const ValueId w = b.random_weight("w", {3, 4}, 0.5f);
  const ValueId y = b.add(OpType::kGemm, "fc", {x, w}, {{"transB", int64_t{1}}});
  const ValueId loss = b.add(OpType::kReduceSum, "loss", {y}, {{"keepdims", int64_t{0}}});
  b.output(loss);
  Graph g = std::move(b).build();
  const size_t forward_nodes = g.num_nodes();
  const std::vector<ValueId> wrt{w};
  const auto grads = train::append_gradients(g, loss, scalar_one(g), wrt);
  verify_graph_or_throw(g);
  const Node& dw = g.node(g.value(grads[0]).producer);
  EXPECT_EQ(dw.op, OpType::kGemm);
  EXPECT_EQ(dw.name, "fc/grad/db");
  EXPECT_EQ(dw.grad_of, "fc");
  // Only what w's gradient needs: no dX Gemm for the input x.
  for (size_t i = forward_nodes; i < g.num_nodes(); ++i)
    EXPECT_NE(g.node(static_cast<NodeId>(i)).name, "fc/grad/da");
}

TEST(Autodiff, AValueTheLossDoesNotDependOnGetsZeros) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {2});
  const ValueId unused = b.input("unused", DType::kF32, {2, 3});
  const ValueId loss = b.add(OpType::kReduceSum, "loss", {x}, {{"keepdims", int64_t{0}}});
  b.output(loss);
  Graph g = std::move(b).build();
  const std::vector<ValueId> wrt{unused};
  const auto grads = train::append_gradients(g, loss, scalar_one(g), wrt);
  g.add_output(grads[0]);
  const auto host = test::make_cpu_ref_host();
  Executor exec(g, host.device("cpu_ref:0"));
  const auto outs = exec.run(random_inputs(g, 1));
  for (double v : to_doubles(outs.at(1))) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(outs.at(1).type.shape, (Shape{2, 3}));
}

TEST(Autodiff, TheLossMustBeAFloatScalar) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {2});
  b.output(x);
  Graph g = std::move(b).build();
  const std::vector<ValueId> wrt{x};
  EXPECT_THROW(train::append_gradients(g, x, scalar_one(g), wrt), GraphError);
}

// The planner gives a backward node its forward node's intent: at O1 the
// white-listed Gemm and its gradient Gemms want 16-bit, the black-listed
// LayerNorm and its LayerNormGrad stay f32; an update is f32 even at O3.
TEST(Autodiff, BackwardNodesFollowTheirForwardNodesIntent) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {2, 4});
  const ValueId w = b.random_weight("w", {4, 4}, 0.5f);
  const ValueId s = b.random_weight("s", {4}, 0.5f);
  const ValueId h = b.add(OpType::kMatMul, "mm", {x, w});
  const ValueId n = b.add(OpType::kLayerNorm, "ln", {h, s});
  const ValueId loss = b.add(OpType::kReduceSum, "loss", {n}, {{"keepdims", int64_t{0}}});
  b.output(loss);
  Graph g = std::move(b).build();
  const std::vector<ValueId> wrt{w, s};
  const auto grads = train::append_gradients(g, loss, scalar_one(g), wrt);
  for (ValueId v : grads) g.add_output(v);
  const auto host = test::make_cpu_ref_host();
  DeviceCapabilities caps(host.device("cpu_ref:0"));
  AmpPolicy p;
  p.level = AmpLevel::kO1;
  const AmpPlan plan = plan_amp(g, p, caps);
  int checked = 0;
  for (const auto& np : plan.nodes) {
    if (np.name == "mm/grad/db_full") {
      EXPECT_TRUE(is_16bit_float(np.intended)) << np.name;
      EXPECT_EQ(np.intent_reason, IntentReason::kFollowsForward);
      ++checked;
    }
    if (np.name == "ln/grad/ln") {
      EXPECT_EQ(np.intended, DType::kF32);
      EXPECT_EQ(np.intent_reason, IntentReason::kFollowsForward);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
}

}  // namespace
