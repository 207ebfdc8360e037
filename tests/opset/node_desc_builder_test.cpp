// NodeDescBuilder, the one writer of ampx_node_desc: what it owns survives
// copies, moves and the original's death; what it borrows points at the
// caller's memory; reset() starts a new node; every field reads back
// through the SDK's NodeView.
#include <ampx/node_desc_builder.hpp>
#include <ampx/opset/validate.hpp>
#include <ampx/plugin_support.hpp>

#include <gtest/gtest.h>

#include <optional>

namespace ampx::plugin_support {
namespace {

NodeDescBuilder lstm_like() {
  NodeDescBuilder b("LSTM", "rnn1");
  b.input(AMPX_DTYPE_F32, {3, 2, 4}).output(AMPX_DTYPE_F16, {3, 1, 2, 5});
  b.attr_int("hidden_size", 5).attr_float("clip", 2.5).attr_ints("axes", {0, 2});
  b.attr_floats("activation_alpha", {0.5, 0.25}).attr_str("direction", "forward");
  return b;
}

// Everything lstm_like() wrote, read through NodeView.
void expect_lstm_like(const ampx_node_desc& d) {
  const NodeView v(d);
  EXPECT_EQ(v.op_type(), "LSTM");
  EXPECT_EQ(v.name(), "rnn1");
  ASSERT_EQ(v.num_inputs(), 1u);
  ASSERT_EQ(v.num_outputs(), 1u);
  EXPECT_EQ(v.input(0).struct_size, sizeof(ampx_tensor_desc));
  EXPECT_EQ(v.input(0).dtype, AMPX_DTYPE_F32);
  EXPECT_EQ(std::vector<int64_t>(v.input(0).dims, v.input(0).dims + v.input(0).rank),
            (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(v.output(0).dtype, AMPX_DTYPE_F16);
  EXPECT_EQ(v.output(0).rank, 4);
  EXPECT_EQ(v.get_int("hidden_size", 0), 5);
  EXPECT_EQ(v.get_float("clip", 0), 2.5);
  EXPECT_EQ(v.get_ints("axes"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(v.get_floats("activation_alpha"), (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(v.get_string("direction"), "forward");
  EXPECT_EQ(v.attr_at(0).struct_size, sizeof(ampx_attr));
}

TEST(NodeDescBuilder, EveryFieldReadsBackThroughNodeView) {
  const NodeDescBuilder b = lstm_like();
  expect_lstm_like(b.desc());
  EXPECT_EQ(b.desc().struct_size, sizeof(ampx_node_desc));
  EXPECT_EQ(b.op_type(), "LSTM");
  EXPECT_EQ(b.name(), "rnn1");
}

// A copy owns copies: it outlives the original, and points at none of its
// memory.
TEST(NodeDescBuilder, CopiesOwnTheirData) {
  std::optional<NodeDescBuilder> original = lstm_like();
  const NodeDescBuilder copy = *original;
  EXPECT_NE(copy.desc().inputs[0].dims, original->desc().inputs[0].dims);
  EXPECT_NE(copy.desc().attrs[3].floats, original->desc().attrs[3].floats);
  EXPECT_NE(copy.desc().op_type, original->desc().op_type);
  original.reset();
  expect_lstm_like(copy.desc());

  NodeDescBuilder assigned("Relu");
  assigned = copy;
  expect_lstm_like(assigned.desc());
}

// Moves keep every address: a description taken before the move stays
// valid; the moved-from builder describes nothing.
TEST(NodeDescBuilder, MovesKeepTheDescriptionValid) {
  NodeDescBuilder a = lstm_like();
  const ampx_tensor_desc* inputs = a.desc().inputs;
  NodeDescBuilder b = std::move(a);
  EXPECT_EQ(b.desc().inputs, inputs);
  expect_lstm_like(b.desc());
  EXPECT_EQ(a.desc().num_inputs, 0u);  // NOLINT(bugprone-use-after-move): valid, empty
  EXPECT_EQ(a.desc().num_attrs, 0u);   // NOLINT(bugprone-use-after-move)
}

// Growth moves the C arrays but never the owned data they point at.
TEST(NodeDescBuilder, ManyEntriesStayValid) {
  NodeDescBuilder b("Concat", "cat");
  for (int i = 0; i < 40; ++i) {
    b.input(AMPX_DTYPE_F32, {1, i + 1});
    b.attr_str("a_rather_long_attribute_name_" + std::to_string(i), "value " + std::to_string(i));
  }
  const NodeView v(b.desc());
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(v.input(static_cast<size_t>(i)).dims[1], i + 1);
    EXPECT_EQ(v.get_string("a_rather_long_attribute_name_" + std::to_string(i)),
              "value " + std::to_string(i));
  }
}

// Constant bytes given to the builder are its own (and copied with it);
// borrowed ones stay the caller's.
TEST(NodeDescBuilder, ConstantsOwnedOrBorrowed) {
  const float weights[2] = {1.0f, 2.0f};
  NodeDescBuilder b("Add", "add");
  b.input(AMPX_DTYPE_F32, {2}, weights).input(AMPX_DTYPE_F32, {2});
  b.constant_input(1, std::vector<std::byte>(8, std::byte{7}));
  EXPECT_EQ(b.desc().inputs[0].const_data, weights);
  const NodeDescBuilder copy = b;
  EXPECT_EQ(copy.desc().inputs[0].const_data, weights);
  ASSERT_NE(copy.desc().inputs[1].const_data, nullptr);
  EXPECT_NE(copy.desc().inputs[1].const_data, b.desc().inputs[1].const_data);
  EXPECT_EQ(static_cast<const std::byte*>(copy.desc().inputs[1].const_data)[7], std::byte{7});
}

// The borrowing calls point at the caller's memory, and reset() leaves
// nothing of the node before.
TEST(NodeDescBuilder, BorrowedEntriesPointAtTheCallersMemory) {
  NodeDescBuilder b = lstm_like();
  const std::vector<int64_t> dims{2, 3};
  const std::vector<double> alphas{0.1};
  const std::vector<int64_t> perm{1, 0};
  const float data[6] = {};
  b.reset("Transpose", "t");
  b.borrow_input(AMPX_DTYPE_F32, dims, data).borrow_output(AMPX_DTYPE_F32, dims);
  b.borrow_attr("perm", std::span<const int64_t>(perm)).borrow_attr("n", int64_t{3});
  b.borrow_attr("f", 0.5).borrow_attr("fs", std::span<const double>(alphas));
  b.borrow_attr("s", "x");
  const ampx_node_desc& d = b.desc();
  EXPECT_STREQ(d.op_type, "Transpose");
  EXPECT_EQ(d.num_inputs, 1u);
  EXPECT_EQ(d.num_outputs, 1u);
  EXPECT_EQ(d.num_attrs, 5u);
  EXPECT_EQ(d.inputs[0].dims, dims.data());
  EXPECT_EQ(d.inputs[0].const_data, data);
  EXPECT_EQ(d.attrs[0].ints, perm.data());
  EXPECT_EQ(d.attrs[3].floats, alphas.data());
  const NodeView v(d);
  EXPECT_EQ(v.get_int("n", 0), 3);
  EXPECT_EQ(v.get_float("f", 0), 0.5);
  EXPECT_EQ(v.get_floats("fs"), alphas);
  EXPECT_EQ(v.get_string("s"), "x");
  std::string why;
  EXPECT_FALSE(opset::is_valid(d, &why));  // "n", "f", ... are no attributes of Transpose
}

// Described node after node, the builder reuses its arrays: the same
// addresses once the largest node has been seen.
TEST(NodeDescBuilder, ResetReusesTheArrays) {
  const std::vector<int64_t> dims{4};
  NodeDescBuilder b;
  const auto describe = [&] {
    b.reset("Add", "a");
    b.borrow_input(AMPX_DTYPE_F32, dims, nullptr).borrow_input(AMPX_DTYPE_F32, dims, nullptr);
    b.borrow_output(AMPX_DTYPE_F32, dims);
    return b.desc().inputs;
  };
  const ampx_tensor_desc* first = describe();
  EXPECT_EQ(describe(), first);
  EXPECT_TRUE(opset::is_valid(b.desc(), nullptr));
}

}  // namespace
}  // namespace ampx::plugin_support
