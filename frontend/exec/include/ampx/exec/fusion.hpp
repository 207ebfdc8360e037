// Fusion of a planned graph for one device, before the executor prepares
// it. The plugin ABI sees one node at a time, so fusion is decided here, on
// the graph, and the fused node is asked of the device like any other:
//  - Conv2d followed by an inference BatchNorm (both f32, constant
//    parameters) becomes one Conv2d with folded weights and bias;
//  - MatMul followed by Add of a constant [N] row becomes MatMul with a bias
//    input;
//  - Conv2d, MatMul, Gemm or BatchNorm followed by an activation gets it as
//    its `activation` epilogue (opset/activation.hpp, docs/OPS.md): Relu, Gelu,
//    Clip, HardSigmoid, HardSwish, Sigmoid, Tanh, LeakyRelu, and the gated
//    forms opset-13 exporters write, x·Sigmoid(x) (swish) and
//    x·HardSigmoid(x; 1/6, 1/2) (hardswish);
//  - a HardSigmoid(x; 1/6, 1/2) whose only consumer is Mul(x, it) becomes
//    one HardSwish node;
//  - Pad (constant zeros, spatial dimensions) -> Conv2d: the padding goes
//    into the convolution's;
//  - Conv2d kernel taps that never touch the input (a dilation as large as
//    the input) are cropped (conv_dead_taps.hpp).
//  - in a training step, ReduceSum(dY over N, H, W) beside
//    Conv2dGradWeight(dY, X) becomes the weight gradient's second output
//    (bias_gradient): the backward-weights primitive computes the bias
//    gradient in its own pass.
// A step is taken only where the plan allows it (the intermediate value has
// one consumer, is not a graph output, and producer and consumer share one
// dtype, i.e. no Cast between them) and where the device answers the fused
// node at least as well as the unfused producer (native stays native). The
// precision plan is unchanged: fusion never changes a node's dtype.
#pragma once

#include <ampx/capability/capability_source.hpp>
#include <ampx/ir/graph.hpp>

#include <span>
#include <string>
#include <vector>

namespace ampx {

struct FusionOptions {
  bool fold_batchnorm = true;
  bool epilogues = true;       // bias and activation epilogues
  bool bias_gradients = true;  // dB from the weight gradient's kernel
};

// One fused node: the surviving node's name and the nodes it absorbed.
struct FusedGroup {
  std::string node;
  std::vector<std::string> absorbed;
};

struct FusedGraph {
  Graph graph;
  std::vector<FusedGroup> groups;
  int absorbed_nodes() const;
};

// `planned` is a plan's executable graph (AmpPlan::graph); `caps` answers for
// the device the result will run on. Output values keep their names.
FusedGraph fuse_for_device(const Graph& planned, CapabilitySource& caps,
                           const FusionOptions& options = {});

// A placed graph (a multi-device plan's): `devices[Node::device]` answers
// for each node; nodes fuse only with consumers on their own device, and the
// fused nodes keep their device.
FusedGraph fuse_placed(const Graph& planned, std::span<CapabilitySource* const> devices,
                       const FusionOptions& options = {});

}  // namespace ampx
