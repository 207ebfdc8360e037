// make_kernel() validation: every bad node throws, naming the node; can_run()
// reports the same without throwing.
#include "harness.hpp"

namespace ampx::test {
namespace {

using reference::UnsupportedNode;

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;

NodeBuilder conv(std::vector<int64_t> wdims = {4, 3, 3, 3}) {
  NodeBuilder b("Conv2d", "conv1");
  b.input(F32, {1, 3, 8, 8}).input(F32, std::move(wdims)).output(F32, {1, 4, 6, 6});
  return b;
}

void expect_invalid(NodeBuilder& b, std::initializer_list<std::string> parts) {
  const std::string where = "node '" + b.name() + "' (" + b.op_type() + "): ";
  std::vector<std::string> all{where};
  all.insert(all.end(), parts.begin(), parts.end());
  const ampx_node_desc& d = b.desc();
  try {
    (void)reference::make_kernel(d);
    ADD_FAILURE() << "no exception for " << where;
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(where, 0), 0u) << msg;
    for (const auto& p : all)
      EXPECT_NE(msg.find(p), std::string::npos) << msg << "\nmissing: " << p;
  }
  std::string why;
  EXPECT_FALSE(reference::can_run(d, &why));
  EXPECT_NE(why.find(where), std::string::npos) << why;
}

TEST(Validation, ValidConvIsAccepted) {
  NodeBuilder b = conv();
  std::string why;
  EXPECT_TRUE(reference::can_run(b.desc(), &why)) << why;
}

TEST(Validation, Conv2dShapesAndAttributes) {
  {
    NodeBuilder b = conv({4, 3, 3});
    expect_invalid(b, {"weight must be 4-D, got [4x3x3]"});
  }
  {
    NodeBuilder b = conv({4, 2, 3, 3});
    expect_invalid(b, {"weight [4x2x3x3] does not match input channels 3 with group 1"});
  }
  {
    NodeBuilder b = conv();
    b.attr_int("group", 2);
    expect_invalid(b, {"divisible by group 2"});
  }
  {
    NodeBuilder b = conv();
    b.attr_int("group", 0);
    expect_invalid(b, {"attribute 'group' = 0 must be >= 1"});
  }
  {
    NodeBuilder b = conv();
    b.attr_ints("strides", {1, 1, 1});
    expect_invalid(b, {"attribute 'strides' must have 2 values, got 3"});
  }
  {
    NodeBuilder b = conv();
    b.attr_ints("strides", {0, 1});
    expect_invalid(b, {"attribute 'strides' has invalid value 0"});
  }
  {
    NodeBuilder b = conv();
    b.attr_float("group", 1.0);
    expect_invalid(b, {"attribute 'group' is FLOAT, expected INT"});
  }
  {
    NodeBuilder b = conv();
    b.attr_ints("pads", {1, 1, 1, 1});  // output would be 8x8
    expect_invalid(b, {"output has shape [1x4x6x6], expected [1x4x8x8]"});
  }
  {
    NodeBuilder b = conv();
    b.input(F32, {5});
    expect_invalid(b, {"bias must be [4], got [5]"});
  }
  {
    NodeBuilder b("Conv2d", "conv1");
    b.input(F32, {1, 3, 8, 8}).output(F32, {1, 4, 6, 6});
    expect_invalid(b, {"has 1 inputs, expected 2 to 4"});
  }
}

TEST(Validation, DtypeRule) {
  {
    NodeBuilder b("Add", "mixed");
    b.input(AMPX_DTYPE_F16, {3}).input(F32, {3}).output(AMPX_DTYPE_F16, {3});
    expect_invalid(b, {"input 1 is f32 but input 0 is f16"});
  }
  {
    NodeBuilder b("Relu", "ints");
    b.input(AMPX_DTYPE_I32, {3}).output(AMPX_DTYPE_I32, {3});
    EXPECT_THROW((void)reference::make_kernel(b.desc()), UnsupportedNode);
    expect_invalid(b, {"input 0 is i32"});
  }
  {
    // f64 compute nodes: only in the float64 mode (KernelOptions).
    NodeBuilder b("Conv2d", "conv64");
    b.input(AMPX_DTYPE_F64, {1, 3, 8, 8})
        .input(AMPX_DTYPE_F64, {4, 3, 3, 3})
        .output(AMPX_DTYPE_F64, {1, 4, 6, 6});
    EXPECT_THROW((void)reference::make_kernel(b.desc()), UnsupportedNode);
    EXPECT_TRUE(reference::can_run(b.desc(), nullptr, {.f64_compute = true}));
  }
  {
    NodeBuilder b("Relu", "relu64");
    b.input(AMPX_DTYPE_F64, {3}).output(AMPX_DTYPE_F64, {3});
    EXPECT_TRUE(reference::can_run(b.desc(), nullptr));
  }
  {
    NodeBuilder b("Gather", "gather");
    b.input(F32, {4, 2}).input(AMPX_DTYPE_F32, {3}).output(F32, {3, 2});
    EXPECT_THROW((void)reference::make_kernel(b.desc()), UnsupportedNode);
  }
  {
    NodeBuilder b("Cast", "cast");
    b.input(F32, {3}).output(AMPX_DTYPE_F16, {3}).attr_int("to", AMPX_DTYPE_BF16);
    expect_invalid(b, {"output is f16, expected bf16"});
  }
  {
    NodeBuilder b("Cast", "cast");
    b.input(F32, {3}).output(AMPX_DTYPE_F16, {3}).attr_int("to", 99);
    expect_invalid(b, {"'to' = 99"});
  }
}

TEST(Validation, UnknownOpIsUnsupported) {
  NodeBuilder b("FancyAttention", "attn");
  b.input(F32, {3}).output(F32, {3});
  EXPECT_THROW((void)reference::make_kernel(b.desc()), UnsupportedNode);
  expect_invalid(b, {"unknown op type"});
}

TEST(Validation, OtherOps) {
  {
    NodeBuilder b("Gelu", "gelu");
    b.input(F32, {3}).output(F32, {3}).attr_str("approximate", "fast");
    expect_invalid(b, {"attribute 'approximate' must be 'none' or 'tanh', got 'fast'"});
  }
  {
    NodeBuilder b("MaxPool", "pool");
    b.input(F32, {1, 1, 4, 4}).output(F32, {1, 1, 2, 2});
    expect_invalid(b, {"missing required attribute 'kernel_shape'"});
  }
  {
    NodeBuilder b("MaxPool", "pool");
    b.input(F32, {1, 1, 4, 4})
        .output(F32, {1, 1, 3, 3})
        .attr_ints("kernel_shape", {2, 2})
        .attr_ints("pads", {2, 0, 0, 0});
    expect_invalid(b, {"pads must be smaller than the kernel"});
  }
  {
    NodeBuilder b("Reshape", "reshape");
    b.input(F32, {2, 3}).output(F32, {6}).attr_ints("shape", {-1, -1});
    expect_invalid(b, {"more than one -1"});
  }
  {
    NodeBuilder b("Reshape", "reshape");
    b.input(F32, {2, 3}).output(F32, {6});
    expect_invalid(b, {"missing required attribute 'shape'"});
  }
  {
    NodeBuilder b("Slice", "slice");
    b.input(F32, {5})
        .output(F32, {5})
        .attr_ints("starts", {0})
        .attr_ints("ends", {5})
        .attr_ints("steps", {0});
    expect_invalid(b, {"step must not be 0"});
  }
  {
    NodeBuilder b("Transpose", "tr");
    b.input(F32, {2, 3}).output(F32, {3, 2}).attr_ints("perm", {0, 0});
    expect_invalid(b, {"not a permutation"});
  }
  {
    NodeBuilder b("Softmax", "sm");
    b.input(F32, {2, 3}).output(F32, {2, 3}).attr_int("axis", 2);
    expect_invalid(b, {"axis 2 is out of range for rank 2"});
  }
  {
    NodeBuilder b("ReduceSum", "rs");
    b.input(F32, {2, 3}).output(F32, {1, 1}).attr_ints("axes", {1, -1});
    expect_invalid(b, {"axis -1 listed twice"});
  }
  {
    NodeBuilder b("MatMul", "mm");
    b.input(F32, {2, 3}).input(F32, {4, 5}).output(F32, {2, 5});
    expect_invalid(b, {"inner dimensions differ: [2x3] x [4x5]"});
  }
  {
    NodeBuilder b("Add", "add");
    b.input(F32, {2, 3}).input(F32, {4}).output(F32, {2, 3});
    expect_invalid(b, {"do not broadcast"});
  }
  {
    NodeBuilder b("Gemm", "gemm");
    b.input(F32, {2, 3}).input(F32, {3, 4}).input(F32, {3, 4}).output(F32, {2, 4});
    expect_invalid(b, {"C [3x4] does not broadcast to [2x4]"});
  }
  {
    NodeBuilder b("LayerNorm", "ln");
    b.input(F32, {2, 3}).input(F32, {2}).output(F32, {2, 3});
    expect_invalid(b, {"scale/bias must be [3], got [2]"});
  }
  {
    NodeBuilder b("Concat", "cat");
    b.input(F32, {2, 3}).input(F32, {3, 3}).output(F32, {5, 3}).attr_int("axis", 1);
    expect_invalid(b, {"input 1 [3x3] differs from [2x3] outside the axis"});
  }
}

TEST(Validation, MalformedDescriptionsNeverThrowFromCanRun) {
  ampx_node_desc d{};
  d.struct_size = sizeof d;
  std::string why;
  EXPECT_FALSE(reference::can_run(d, &why));  // no op_type
  EXPECT_FALSE(why.empty());
  d.struct_size = 8;  // too small to hold anything
  EXPECT_FALSE(reference::can_run(d, &why));
  NodeBuilder b("Relu", "neg");
  b.input(F32, {-1}).output(F32, {3});
  EXPECT_FALSE(reference::can_run(b.desc(), &why));
  EXPECT_NE(why.find("negative dimension"), std::string::npos) << why;
}

TEST(Validation, StructSizeStrideIsHonoured) {
  // A "newer host" whose tensor and attribute structs are bigger: the
  // kernels must walk the arrays with the declared struct_size.
  struct BigTensor {
    ampx_tensor_desc t;
    char extra[24];
  };
  struct BigAttr {
    ampx_attr a;
    char extra[40];
  };
  const int64_t dims[2] = {2, 3};
  const int64_t dims_r[1] = {2};
  BigTensor in{}, out{};
  in.t = {sizeof(BigTensor), F32, 2, dims, nullptr};
  out.t = {sizeof(BigTensor), F32, 1, dims_r, nullptr};
  const int64_t axes[1] = {1};
  BigAttr attrs[2]{};
  attrs[0].a.struct_size = sizeof(BigAttr);
  attrs[0].a.name = "keepdims";
  attrs[0].a.kind = AMPX_ATTR_INT;
  attrs[0].a.i = 0;
  attrs[1].a.struct_size = sizeof(BigAttr);
  attrs[1].a.name = "axes";  // found only at the declared stride
  attrs[1].a.kind = AMPX_ATTR_INTS;
  attrs[1].a.ints = axes;
  attrs[1].a.count = 1;
  ampx_node_desc d{sizeof d, "ReduceSum", "r", 1, &in.t, 1, &out.t, 2, &attrs[0].a};
  auto k = reference::make_kernel(d);
  const float x[6] = {1, 2, 3, 4, 5, 6};
  float y[2] = {};
  const void* ip[] = {x};
  void* op[] = {y};
  k->run(ip, op);
  EXPECT_EQ(std::vector<float>(y, y + 2), (std::vector<float>{6, 15}));
}

}  // namespace
}  // namespace ampx::test
