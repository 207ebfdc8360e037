// The op x shape catalogue `ampx plugin-check` and every backend's
// conformance tests (tests/onednn, tests/vulkan, tests/cuda) run against
// cpu_ref: each case is one node
// of docs/OPS.md with odd shapes and random, non-zero inputs, built for a
// given float dtype. A backend answers each case as it really can; the tests
// compare whatever runs with the reference. One catalogue, so a case added
// for one backend is asked of every backend.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ampx/opset/catalogue.hpp"
#include "host_tensor.hpp"
#include "node_builder.hpp"

namespace ampx::check::op_cases {

inline constexpr ampx_dtype F32 = AMPX_DTYPE_F32;
inline constexpr ampx_dtype F16 = AMPX_DTYPE_F16;
inline constexpr ampx_dtype BF16 = AMPX_DTYPE_BF16;
inline constexpr ampx_dtype I64 = AMPX_DTYPE_I64;

// One node instance with its (random) inputs. Builders keep pointers to
// constant data, so Case objects are not copied after make().
struct Case {
  NodeBuilder nb{"", ""};
  std::vector<Tensor> inputs;
};
using Maker = std::function<void(Rng&, ampx_dtype, Case&)>;

// Adds an input; `constant`: its bytes are given at prepare (a weight).
inline void in(Case& c, Tensor t, bool constant = false) {
  c.inputs.push_back(std::move(t));
  const Tensor& s = c.inputs.back();
  c.nb.input(s.dtype, s.dims, constant ? s.bytes.data() : nullptr);
}

inline Tensor rnd(Rng& r, ampx_dtype dt, std::vector<int64_t> dims, double scale = 1.0) {
  return random_tensor(r, dt, std::move(dims), scale);
}

inline Maker unary(std::string op, std::vector<int64_t> dims,
                   std::function<void(NodeBuilder&)> attrs = nullptr) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    in(c, rnd(r, dt, dims, 3.0));
    c.nb.output(dt, dims);
    if (attrs) attrs(c.nb);
  };
}

// A unary op on these values (rounded to the case's dtype).
inline Maker unary_values(std::string op, std::vector<double> values) {
  return [=](Rng&, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    const std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
    in(c, Tensor::of(dt, dims, values));
    c.nb.output(dt, dims);
  };
}

inline Maker binary(std::string op, std::vector<int64_t> a, std::vector<int64_t> b,
                    std::vector<int64_t> y) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    in(c, rnd(r, dt, a));
    in(c, rnd(r, dt, b));
    c.nb.output(dt, y);
  };
}

// 3x3 window, stride 2, pads 1 on 8x8: ceil_mode gives 5x5 (floor 4x4).
inline Maker pool(std::string op, int ceil, int include_pad) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "pool");
    in(c, rnd(r, dt, {1, 2, 8, 8}));
    c.nb.output(dt, {1, 2, ceil ? 5 : 4, ceil ? 5 : 4})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("strides", {2, 2})
        .attr_ints("pads", {1, 1, 1, 1})
        .attr_int("ceil_mode", ceil);
    if (op == "AveragePool") c.nb.attr_int("count_include_pad", include_pad);
  };
}

// A dilated window: kernel 3x2, dilations 2x3, strides 2x1, uneven pads on
// 9x8 (ceil_mode's last row of windows hangs past the bottom padding).
inline Maker dilated_pool(std::string op, int ceil, int include_pad) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "pool");
    in(c, rnd(r, dt, {1, 3, 9, 8}));
    c.nb.output(dt, {1, 3, ceil ? 5 : 4, 8})
        .attr_ints("kernel_shape", {3, 2})
        .attr_ints("strides", {2, 1})
        .attr_ints("pads", {2, 1, 1, 2})
        .attr_ints("dilations", {2, 3})
        .attr_int("ceil_mode", ceil);
    if (op == "AveragePool") c.nb.attr_int("count_include_pad", include_pad);
  };
}

// Two inputs of `dt` where b repeats some of a's elements (ties, so that
// Less and LessOrEqual differ), then a bool output of the broadcast shape.
inline Maker compare(std::string op) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    Tensor a = rnd(r, dt, {4, 5}), b = rnd(r, dt, {5});
    for (size_t i = 0; i < 5; i += 2) b.set(i, a.get(5 + i));
    in(c, std::move(a));
    in(c, std::move(b));
    c.nb.output(AMPX_DTYPE_BOOL, {4, 5});
  };
}

// A variadic op (Min, Max, Sum, Mean) over inputs of these shapes.
inline Maker variadic(std::string op, std::vector<std::vector<int64_t>> ins,
                      std::vector<int64_t> y) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    for (const auto& d : ins) in(c, rnd(r, dt, d));
    c.nb.output(dt, y);
  };
}

// A Reduce op on [2, 3, 5] over `axes`, keepdims 0 or 1; inputs scaled.
inline Maker reduce(std::string op, std::vector<int64_t> axes, int keep, std::vector<int64_t> y,
                    double scale = 1.0) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    in(c, rnd(r, dt, {2, 3, 5}, scale));
    c.nb.output(dt, y).attr_int("keepdims", keep);
    if (!axes.empty()) c.nb.attr_ints("axes", axes);
  };
}

// Conv2d 2x3x7x9 -> 5 channels, 3x3 pads 1, constant weights and bias, with
// the fused `activation` and its parameters (activation_alpha/_beta).
inline Maker conv_epilogue(std::string act, std::optional<double> alpha = std::nullopt,
                           std::optional<double> beta = std::nullopt) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("Conv2d", "conv");
    in(c, rnd(r, dt, {2, 3, 7, 9}));
    in(c, rnd(r, dt, {5, 3, 3, 3}), true);
    in(c, rnd(r, dt, {5}), true);
    c.nb.output(dt, {2, 5, 7, 9}).attr_ints("pads", {1, 1, 1, 1}).attr_str("activation", act);
    if (alpha) c.nb.attr_float("activation_alpha", *alpha);
    if (beta) c.nb.attr_float("activation_beta", *beta);
  };
}

// Cases whose node carries a fused epilogue (docs/OPS.md): a backend may
// decline them (answer `unsupported`), and the host then does not fuse.
inline bool is_epilogue_case(const std::string& name) {
  return name.size() > 9 && name.compare(name.size() - 9, 9, "_epilogue") == 0;
}

// MaxPool and AveragePool with `dilations` (dilated_pool): cpu_ref and
// onednn run them; the vulkan and cuda kernels walk undilated windows and
// must answer `unsupported` in every dtype.
inline bool is_dilated_pool_case(const std::string& name) {
  return (name.rfind("MaxPool_", 0) == 0 || name.rfind("AveragePool_", 0) == 0) &&
         name.find("_dilated") != std::string::npos;
}

// The later ONNX ops (docs/OPS.md, the op set's own list): cpu_ref and
// onednn run all of them, vulkan all but LSTM, GRU and RNN (each backend's
// tests say which it must run); the cuda plugin those of
// tests/cuda/cuda_onnx_ops.hpp, and placement runs the rest elsewhere.
inline bool is_reference_only_op(const std::string& op) {
  return opset::is_reference_only(op);
}

// The ops added for the ONNX importer (docs/OPS.md): cpu_ref and onednn run
// them, vulkan those its tests list (vulkan_runs_importer_op); the cuda
// plugin those of tests/cuda/cuda_onnx_ops.hpp and must answer the others
// `unsupported` in every dtype.
inline bool is_importer_op(const std::string& op) {
  if (is_reference_only_op(op)) return true;
  for (const char* o :
       {"ConvTranspose", "LeakyRelu", "PRelu",      "HardSigmoid", "HardSwish", "Erf",
        "Pow",           "Sqrt",      "Reciprocal", "Exp",         "Log",       "Neg",
        "LogSoftmax",    "ReduceMax", "ArgMax",     "Split",       "Expand",    "Pad",
        "Resize",        "Where",     "Equal"})
    if (op == o) return true;
  return false;
}

// The training ops (docs/OPS.md, "Training ops"): which of them each
// backend runs, and how, is in docs/TRAINING.md ("Backends"); the backends'
// tests hold them to it.
inline bool is_training_op(const std::string& op) {
  return opset::is_training_op(op);
}

// dY and a forward tensor of the same shape: the elementwise gradients.
inline Maker grad_unary(std::string op, std::vector<int64_t> dims,
                        std::function<void(NodeBuilder&)> attrs = nullptr) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "g");
    in(c, rnd(r, dt, dims));
    in(c, rnd(r, dt, dims, 2.0));
    c.nb.output(dt, dims);
    if (attrs) attrs(c.nb);
  };
}

// The training cases (is_training_op). The optimizer updates are f32 only:
// their cases are f32 in every dtype they are asked for.
inline void add_training_cases(std::map<std::string, Maker>& m) {
  m["ReluGrad"] = grad_unary("ReluGrad", {3, 5, 7});
  m["SigmoidGrad"] = grad_unary("SigmoidGrad", {3, 5, 7});
  m["TanhGrad"] = grad_unary("TanhGrad", {3, 5, 7});
  m["GeluGrad_erf"] = grad_unary("GeluGrad", {3, 5, 7});
  m["GeluGrad_tanh"] =
      grad_unary("GeluGrad", {3, 5, 7}, [](NodeBuilder& b) { b.attr_str("approximate", "tanh"); });
  m["ClipGrad"] = grad_unary("ClipGrad", {3, 5, 7}, [](NodeBuilder& b) {
    b.attr_float("min", -0.5).attr_float("max", 0.75);
  });
  m["SoftmaxGrad_axis1"] =
      grad_unary("SoftmaxGrad", {3, 4, 5}, [](NodeBuilder& b) { b.attr_int("axis", 1); });
  m["LayerNormGrad"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("LayerNormGrad", "ln");
    in(c, rnd(r, dt, {2, 3, 8}));
    in(c, rnd(r, dt, {2, 3, 8}));
    in(c, rnd(r, dt, {3, 8}));
    c.nb.output(dt, {2, 3, 8}).output(dt, {3, 8}).output(dt, {3, 8}).attr_int("axis", 1);
  };
  m["BatchNormTraining"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("BatchNormTraining", "bn");
    in(c, rnd(r, dt, {3, 4, 5, 3}));
    for (int i = 0; i < 3; ++i) in(c, rnd(r, dt, {4}));
    in(c, Tensor::of(dt, {4}, {0.5, 1.0, 1.5, 2.0}));
    c.nb.output(dt, {3, 4, 5, 3});
    for (int i = 0; i < 4; ++i) c.nb.output(dt, {4});
    c.nb.attr_float("momentum", 0.8);
  };
  m["BatchNormGrad"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("BatchNormGrad", "bn");
    in(c, rnd(r, dt, {3, 4, 5, 3}));
    in(c, rnd(r, dt, {3, 4, 5, 3}));
    in(c, rnd(r, dt, {4}));
    in(c, rnd(r, dt, {4}, 0.1));
    in(c, Tensor::of(dt, {4}, {0.5, 1.0, 1.5, 2.0}));
    c.nb.output(dt, {3, 4, 5, 3}).output(dt, {4}).output(dt, {4});
  };
  m["Conv2dGradWeight_grouped_strided_dilated"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("Conv2dGradWeight", "dw");
    in(c, rnd(r, dt, {2, 6, 4, 4}));
    in(c, rnd(r, dt, {2, 4, 7, 6}));
    c.nb.output(dt, {6, 2, 3, 3})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("strides", {2, 1})
        .attr_ints("pads", {1, 0, 1, 2})
        .attr_ints("dilations", {1, 2})
        .attr_int("group", 2);
  };
  m["MaxPoolGrad_ceil"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("MaxPoolGrad", "pool");
    in(c, rnd(r, dt, {1, 2, 5, 5}));
    in(c, rnd(r, dt, {1, 2, 8, 8}));
    c.nb.output(dt, {1, 2, 8, 8})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("strides", {2, 2})
        .attr_ints("pads", {1, 1, 1, 1})
        .attr_int("ceil_mode", 1);
  };
  m["AveragePoolGrad_include_pad"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("AveragePoolGrad", "pool");
    in(c, rnd(r, dt, {1, 2, 4, 4}));
    c.nb.output(dt, {1, 2, 8, 8})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("strides", {2, 2})
        .attr_ints("pads", {1, 1, 1, 1})
        .attr_int("count_include_pad", 1)
        .attr_ints("input_shape", {1, 2, 8, 8});
  };
  m["SliceGrad_stepped"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("SliceGrad", "s");
    in(c, rnd(r, dt, {2, 3, 3}));
    c.nb.output(dt, {5, 7, 3})
        .attr_ints("starts", {1, -1})
        .attr_ints("ends", {5, -8})
        .attr_ints("axes", {0, 1})
        .attr_ints("steps", {2, -3})
        .attr_ints("input_shape", {5, 7, 3});
  };
  m["GatherGrad_repeated_indices"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("GatherGrad", "g");
    in(c, rnd(r, dt, {3, 5, 2}));
    in(c, Tensor::of(I64, {5}, {4, -1, 0, 2, 0}));
    c.nb.output(dt, {3, 5, 2}).attr_int("axis", 1).attr_ints("data_shape", {3, 5, 2});
  };
  m["DropoutTraining"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("DropoutTraining", "d");
    in(c, rnd(r, dt, {4, 33}));
    in(c, Tensor::of(I64, {1}, {12345}));
    c.nb.output(dt, {4, 33}).output(dt, {4, 33}).attr_float("ratio", 0.25);
  };
  m["SoftmaxCrossEntropy"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("SoftmaxCrossEntropy", "loss");
    in(c, rnd(r, dt, {6, 11}, 4.0));
    in(c, Tensor::of(I64, {6}, {0, 10, 3, 3, 7, 1}));
    c.nb.output(dt, {}).output(dt, {6, 11});
  };
  m["SoftmaxCrossEntropyGrad"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("SoftmaxCrossEntropyGrad", "dloss");
    in(c, Tensor::of(dt, {}, {0.75}));
    in(c, rnd(r, dt, {6, 11}));
    in(c, Tensor::of(I64, {6}, {0, 10, 3, 3, 7, 1}));
    c.nb.output(dt, {6, 11});
  };
  m["SgdUpdate_nesterov"] = [](Rng& r, ampx_dtype, Case& c) {
    c.nb = NodeBuilder("SgdUpdate", "sgd");
    in(c, rnd(r, F32, {7, 9}));
    in(c, rnd(r, F32, {7, 9}));
    in(c, Tensor::of(F32, {3}, {0.1, 0.5, 1.0}));
    in(c, rnd(r, F32, {7, 9}));
    c.nb.output(F32, {7, 9}).output(F32, {7, 9});
    c.nb.attr_float("momentum", 0.9).attr_int("nesterov", 1).attr_float("weight_decay", 0.01);
  };
  m["AdamUpdate_decoupled"] = [](Rng& r, ampx_dtype, Case& c) {
    c.nb = NodeBuilder("AdamUpdate", "adam");
    for (int i = 0; i < 3; ++i) in(c, rnd(r, F32, {7, 9}));
    in(c, Tensor::of(F32, {7, 9}, std::vector<double>(63, 0.25)));
    in(c, Tensor::of(F32, {5}, {0.01, 1.0, 1.0, 0.19, 0.0199}));
    c.nb.output(F32, {7, 9}).output(F32, {7, 9}).output(F32, {7, 9});
    c.nb.attr_float("weight_decay", 0.1).attr_int("decoupled", 1);
  };
  // Three gradients (one spans two of the reference's 65,536-element sum
  // blocks), loss scale 8 undone by grad_scale 1/8, a clip bound that bites.
  m["UpdateGuard_clip"] = [](Rng& r, ampx_dtype, Case& c) {
    c.nb = NodeBuilder("UpdateGuard", "guard");
    in(c, Tensor::of(F32, {3}, {0.01, 0.125, 1.0}));
    in(c, rnd(r, F32, {257, 300}));
    in(c, rnd(r, F32, {5}));
    in(c, rnd(r, F32, {3, 3, 2}));
    c.nb.output(F32, {3}).output(F32, {2});
    c.nb.attr_float("clip_norm", 1.0).attr_int("skip_nonfinite", 1);
  };
  // Each input in its own dtype: a large f32 tensor, one with an infinity,
  // a NaN, a zero and values below 2^-14, and an f16 one with a subnormal
  // and f16's largest value.
  m["TensorStats_mixed"] = [](Rng& r, ampx_dtype, Case& c) {
    c.nb = NodeBuilder("TensorStats", "probe");
    in(c, rnd(r, F32, {257, 300}));
    in(c, Tensor::of(F32, {6}, {1.5, -INFINITY, 1e-6, 0.0, 3e-5, NAN}));
    in(c, Tensor::of(F16, {4}, {2.0, 1e-6, 65504.0, -0.5}));
    c.nb.output(F32, {3, 3});
  };
  // More inputs than one Vulkan pass-1 dispatch binds (7), in runs of two
  // dtypes, and an f32 tensor of several 8,192-element chunks with an
  // infinity and a NaN in different chunks and values below 2^-14.
  m["TensorStats_many_inputs"] = [](Rng& r, ampx_dtype, Case& c) {
    c.nb = NodeBuilder("TensorStats", "probe");
    Tensor big = rnd(r, F32, {3, 10007});
    big.set(9000, INFINITY);
    big.set(25000, NAN);
    for (size_t i = 11; i < 30021; i += 97) big.set(i, 1e-7);
    in(c, big);
    for (int i = 0; i < 4; ++i) in(c, rnd(r, F32, {5 + 13 * i, 3}));
    for (int i = 0; i < 2; ++i) in(c, rnd(r, F16, {2, 9 + 40 * i}, 0.001));
    for (int i = 0; i < 8; ++i) in(c, rnd(r, F32, {7 + i}, 100.0));
    c.nb.output(F32, {15, 3});
  };
}

// One LSTM (T 5, N 3, I 4, H 7) with peepholes and initial states,
// default activations, no clip: the form oneDNN's RNN primitive computes
// (backends/onednn/src/rnn_kernel.hpp). W, R, B and P constant (weights)
// unless `constant_weights` is false; `lens`, when given, as a run-time
// sequence_lens input.
inline Maker lstm_case(std::string direction, bool constant_weights,
                       std::vector<double> lens = {}) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    const int64_t T = 5, N = 3, I = 4, H = 7, D = direction == "bidirectional" ? 2 : 1;
    c.nb = NodeBuilder("LSTM", "n");
    in(c, rnd(r, dt, {T, N, I}));
    in(c, rnd(r, dt, {D, 4 * H, I}, 0.4), constant_weights);
    in(c, rnd(r, dt, {D, 4 * H, H}, 0.4), constant_weights);
    in(c, rnd(r, dt, {D, 8 * H}, 0.4), constant_weights);
    in(c, rnd(r, dt, {D, N, H}));
    in(c, rnd(r, dt, {D, N, H}));
    in(c, rnd(r, dt, {D, 3 * H}, 0.4), constant_weights);
    if (!lens.empty()) in(c, Tensor::of(I64, {N}, lens));
    c.nb.output(dt, {T, D, N, H}).output(dt, {D, N, H}).output(dt, {D, N, H});
    c.nb.attr_int("hidden_size", H).attr_str("direction", direction);
  };
}

// A GRU or RNN (T 5, N 3, I 4, H 7; G gates) with an initial state and
// constant weights, `attrs` on top of hidden_size and direction.
inline Maker gru_rnn_case(std::string op, std::string direction,
                          std::function<void(NodeBuilder&)> attrs = nullptr) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    const int64_t T = 5, N = 3, I = 4, H = 7, D = direction == "bidirectional" ? 2 : 1;
    const int64_t G = op == "GRU" ? 3 : 1;
    c.nb = NodeBuilder(op, "n");
    in(c, rnd(r, dt, {T, N, I}));
    in(c, rnd(r, dt, {D, G * H, I}, 0.4), true);
    in(c, rnd(r, dt, {D, G * H, H}, 0.4), true);
    in(c, rnd(r, dt, {D, 2 * G * H}, 0.4), true);
    in(c, rnd(r, dt, {D, N, H}));
    c.nb.output(dt, {T, D, N, H}).output(dt, {D, N, H});
    c.nb.attr_int("hidden_size", H).attr_str("direction", direction);
    if (attrs) attrs(c.nb);
  };
}

// The recurrent ops in the forms oneDNN's RNN primitives compute (the
// onednn plugin runs them there; the cases above with clip, sequence
// lengths or other activations run on its loop): LSTM in every direction,
// with weights as inputs, with run-time sequence_lens all seq_length and
// with one shorter (a run on the loop); GRU with and without
// linear_before_reset; RNN with Tanh, Relu and Sigmoid.
inline void add_recurrent_cases(std::map<std::string, Maker>& m) {
  m["LSTM_forward_peepholes"] = lstm_case("forward", true);
  m["LSTM_reverse_peepholes"] = lstm_case("reverse", true);
  m["LSTM_bidirectional_peepholes"] = lstm_case("bidirectional", true);
  m["LSTM_bidirectional_weights_in"] = lstm_case("bidirectional", false);
  m["LSTM_forward_lens_full"] = lstm_case("forward", true, {5, 5, 5});
  m["LSTM_forward_lens_short"] = lstm_case("forward", true, {5, 2, 5});
  m["GRU_forward_reset_before"] = gru_rnn_case("GRU", "forward");
  m["GRU_bidirectional_linear_before_reset"] = gru_rnn_case(
      "GRU", "bidirectional", [](NodeBuilder& b) { b.attr_int("linear_before_reset", 1); });
  m["GRU_reverse_linear_before_reset"] =
      gru_rnn_case("GRU", "reverse", [](NodeBuilder& b) { b.attr_int("linear_before_reset", 1); });
  m["RNN_tanh_bidirectional"] = gru_rnn_case("RNN", "bidirectional");
  m["RNN_relu_forward"] =
      gru_rnn_case("RNN", "forward", [](NodeBuilder& b) { b.attr_str("activations", "Relu"); });
  m["RNN_sigmoid_reverse"] =
      gru_rnn_case("RNN", "reverse", [](NodeBuilder& b) { b.attr_str("activations", "Sigmoid"); });
}

// The elementwise ops at the ranks backends flatten, pad or special-case:
// a scalar (rank 0), vectors (rank 1) of 3, 60 and 1001 elements (short,
// under one 64-wide workgroup, odd and past every SIMD width) and rank 6,
// and for the binary ops a scalar broadcast against a vector and against
// [2, 3, 5] on either side. (oneDNN 2.6's reference eltwise wrote nothing
// for a rank-1 HardSigmoid and the wrong elements for a rank-6 one, so its
// output kept whatever the buffer held.)
namespace rank_edges {

inline constexpr ampx_dtype BOOL = AMPX_DTYPE_BOOL;

inline std::string shape_tag(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "0d";
  std::string s = std::to_string(dims.size()) + "d";
  if (dims.size() == 1) s += "_" + std::to_string(dims[0]);
  return s;
}

// An input of `op` with these dims: in its domain (positive for Sqrt and
// Log and Pow's base, bool for the logical ops), never zero.
inline Tensor operand(Rng& r, const std::string& op, ampx_dtype dt, std::vector<int64_t> dims,
                      size_t index) {
  if (op == "Not" || op == "And" || op == "Or") {
    std::vector<double> v(static_cast<size_t>(numel_of(dims)));
    for (auto& b : v) b = r.coin() ? 1 : 0;
    return Tensor::of(BOOL, std::move(dims), v);
  }
  const bool positive = op == "Sqrt" || op == "Log" || (op == "Pow" && index == 0);
  Tensor t = rnd(r, dt, std::move(dims), index == 0 ? 3.0 : 2.0);
  if (positive)
    for (size_t i = 0; i < static_cast<size_t>(t.numel()); ++i) t.set(i, std::fabs(t.get(i)));
  return t;
}

inline bool has_bool_result(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
         op == "GreaterOrEqual" || op == "Not" || op == "And" || op == "Or";
}

inline Maker unary_at(std::string op, std::vector<int64_t> dims,
                      std::function<void(NodeBuilder&)> attrs) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    in(c, operand(r, op, dt, dims, 0));
    c.nb.output(has_bool_result(op) ? BOOL : dt, dims);
    if (attrs) attrs(c.nb);
  };
}

// A binary op on a and b (broadcast to y); the comparisons with some ties.
inline Maker binary_at(std::string op, std::vector<int64_t> a, std::vector<int64_t> b,
                       std::vector<int64_t> y, std::function<void(NodeBuilder&)> attrs) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    Tensor ta = operand(r, op, dt, a, 0), tb = operand(r, op, dt, b, 1);
    if (has_bool_result(op) && ta.dtype != BOOL) {
      const size_t n = static_cast<size_t>(std::min(ta.numel(), tb.numel()));
      for (size_t i = 0; i < n; i += 3) tb.set(i, ta.get(i));
    }
    in(c, std::move(ta));
    in(c, std::move(tb));
    c.nb.output(has_bool_result(op) ? BOOL : dt, y);
    if (attrs) attrs(c.nb);
  };
}

struct EdgeOp {
  std::string name;  // the case name's stem
  std::string op;
  std::function<void(NodeBuilder&)> attrs;
};

inline void add(std::map<std::string, Maker>& m) {
  const std::vector<std::vector<int64_t>> unary_shapes = {
      {}, {3}, {60}, {1001}, {2, 3, 1, 2, 3, 2}};
  const std::vector<EdgeOp> unaries = {
      {"Relu", "Relu", nullptr},
      {"Sigmoid", "Sigmoid", nullptr},
      {"Tanh", "Tanh", nullptr},
      {"Gelu_erf", "Gelu", nullptr},
      {"Gelu_tanh", "Gelu", [](NodeBuilder& b) { b.attr_str("approximate", "tanh"); }},
      {"Clip", "Clip", [](NodeBuilder& b) { b.attr_float("min", -0.3).attr_float("max", 0.5); }},
      {"LeakyRelu", "LeakyRelu", [](NodeBuilder& b) { b.attr_float("alpha", 0.1); }},
      {"HardSigmoid", "HardSigmoid",
       [](NodeBuilder& b) { b.attr_float("alpha", 0.5).attr_float("beta", 0.6); }},
      {"HardSwish", "HardSwish", nullptr},
      {"Erf", "Erf", nullptr},
      {"Exp", "Exp", nullptr},
      {"Neg", "Neg", nullptr},
      {"Reciprocal", "Reciprocal", nullptr},
      {"Sqrt", "Sqrt", nullptr},
      {"Log", "Log", nullptr},
      {"Floor", "Floor", nullptr},
      {"Ceil", "Ceil", nullptr},
      {"Round", "Round", nullptr},
      {"Abs", "Abs", nullptr},
      {"Softplus", "Softplus", nullptr},
      {"Mish", "Mish", nullptr},
      {"Sin", "Sin", nullptr},
      {"Cos", "Cos", nullptr},
      {"Tan", "Tan", nullptr},
      {"Asin", "Asin", nullptr},
      {"Acos", "Acos", nullptr},
      {"Atan", "Atan", nullptr},
      {"Sinh", "Sinh", nullptr},
      {"Cosh", "Cosh", nullptr},
      {"Asinh", "Asinh", nullptr},
      {"Acosh", "Acosh", nullptr},
      {"Atanh", "Atanh", nullptr},
      {"Not", "Not", nullptr},
  };
  for (const EdgeOp& e : unaries)
    for (const auto& d : unary_shapes)
      m["Rank_" + e.name + "_" + shape_tag(d)] = unary_at(e.op, d, e.attrs);

  struct Shapes {
    const char* tag;
    std::vector<int64_t> a, b, y;
  };
  const std::vector<Shapes> binary_shapes = {
      {"0d", {}, {}, {}},
      {"1d_1001", {1001}, {1001}, {1001}},
      {"1d_60_by_0d", {60}, {}, {60}},
      {"0d_by_1d_3", {}, {3}, {3}},
      {"0d_by_3d", {}, {2, 3, 5}, {2, 3, 5}},
      {"3d_by_0d", {2, 3, 5}, {}, {2, 3, 5}},
  };
  const std::vector<EdgeOp> binaries = {
      {"Add", "Add", nullptr},
      {"Sub", "Sub", nullptr},
      {"Mul", "Mul", nullptr},
      {"Div", "Div", nullptr},
      {"Pow", "Pow", nullptr},
      {"Mod_fmod", "Mod", [](NodeBuilder& b) { b.attr_int("fmod", 1); }},
      {"Min", "Min", nullptr},
      {"Max", "Max", nullptr},
      {"Sum", "Sum", nullptr},
      {"Mean", "Mean", nullptr},
      {"Equal", "Equal", nullptr},
      {"Less", "Less", nullptr},
      {"Greater", "Greater", nullptr},
      {"LessOrEqual", "LessOrEqual", nullptr},
      {"GreaterOrEqual", "GreaterOrEqual", nullptr},
      {"And", "And", nullptr},
      {"Or", "Or", nullptr},
  };
  for (const EdgeOp& e : binaries)
    for (const Shapes& s : binary_shapes)
      m["Rank_" + e.name + "_" + s.tag] = binary_at(e.op, s.a, s.b, s.y, e.attrs);
  // PRelu's slope broadcasts into X only.
  for (const Shapes& s : binary_shapes)
    if (s.y == s.a)
      m["Rank_PRelu_" + std::string(s.tag)] = binary_at("PRelu", s.a, s.b, s.y, nullptr);
  // Pow by a constant scalar (oneDNN's eltwise_pow, not its binary path).
  m["Rank_Pow_constant_1d_1001"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("Pow", "n");
    in(c, operand(r, "Pow", dt, {1001}, 0));
    in(c, Tensor::of(dt, {}, {3.0}), true);
    c.nb.output(dt, {1001});
  };
  // Where: a scalar condition, a vector one, and scalars broadcast into it.
  m["Rank_Where_0d"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("Where", "n");
    in(c, Tensor::of(BOOL, {}, {1}));
    in(c, rnd(r, dt, {}));
    in(c, rnd(r, dt, {}));
    c.nb.output(dt, {});
  };
  m["Rank_Where_1d_1001_scalars"] = [](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder("Where", "n");
    in(c, operand(r, "And", dt, {1001}, 0));
    in(c, rnd(r, dt, {}));
    in(c, rnd(r, dt, {1001}));
    c.nb.output(dt, {1001});
  };
  // The elementwise gradients (dY, then X or Y) on a scalar and a vector.
  const std::vector<EdgeOp> grads = {
      {"ReluGrad", "ReluGrad", nullptr},
      {"SigmoidGrad", "SigmoidGrad", nullptr},
      {"TanhGrad", "TanhGrad", nullptr},
      {"GeluGrad_erf", "GeluGrad", nullptr},
      {"GeluGrad_tanh", "GeluGrad", [](NodeBuilder& b) { b.attr_str("approximate", "tanh"); }},
      {"ClipGrad", "ClipGrad",
       [](NodeBuilder& b) { b.attr_float("min", -0.5).attr_float("max", 0.75); }},
  };
  for (const EdgeOp& e : grads)
    for (const std::vector<int64_t>& d : {std::vector<int64_t>{}, std::vector<int64_t>{1001},
                                          std::vector<int64_t>{2, 3, 1, 2, 3, 2}})
      m["Rank_" + e.name + "_" + shape_tag(d)] = grad_unary(e.op, d, e.attrs);
}

}  // namespace rank_edges

inline const std::map<std::string, Maker>& cases() {
  static const std::map<std::string, Maker> all = [] {
    std::map<std::string, Maker> m = {
      {"Conv2d_bias_stride_pad_dilation",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {2, 3, 7, 9}));
         in(c, rnd(r, dt, {5, 3, 3, 3}));
         in(c, rnd(r, dt, {5}));
         c.nb.output(dt, {2, 5, 4, 7})
             .attr_ints("strides", {2, 1})
             .attr_ints("pads", {1, 0, 1, 2})
             .attr_ints("dilations", {1, 2});
       }},
      {"Conv2d_grouped_constant_weights",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {1, 4, 6, 5}));
         in(c, rnd(r, dt, {6, 2, 3, 3}), true);
         c.nb.output(dt, {1, 6, 6, 5}).attr_ints("pads", {1, 1, 1, 1}).attr_int("group", 2);
       }},
      {"Conv2d_bias_relu_epilogue",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {2, 3, 7, 9}));
         in(c, rnd(r, dt, {5, 3, 3, 3}), true);
         in(c, rnd(r, dt, {5}), true);
         c.nb.output(dt, {2, 5, 7, 9}).attr_ints("pads", {1, 1, 1, 1}).attr_str("activation", "relu");
       }},
      // The epilogues fusion writes for opset-13 exports (HardSwish as
      // x * HardSigmoid(x), SiLU as x * Sigmoid(x), ReLU6 as Clip 0..6),
      // each with its parameters.
      {"Conv2d_hardswish_epilogue", conv_epilogue("hardswish")},
      // ResNet's conv -> Add(residual) -> Relu: the residual is input 3.
      {"Conv2d_residual_relu_epilogue",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {2, 3, 7, 9}));
         in(c, rnd(r, dt, {8, 3, 3, 3}), true);
         in(c, rnd(r, dt, {8}), true);
         in(c, rnd(r, dt, {2, 8, 7, 9}));
         c.nb.output(dt, {2, 8, 7, 9}).attr_ints("pads", {1, 1, 1, 1}).attr_str("activation", "relu");
       }},
      {"Conv2d_hardsigmoid_epilogue", conv_epilogue("hardsigmoid", 1.0 / 6.0, 0.5)},
      {"Conv2d_swish_epilogue", conv_epilogue("swish")},
      {"Conv2d_clip_epilogue", conv_epilogue("clip", 0.0, 6.0)},
      {"Conv2d_sigmoid_epilogue", conv_epilogue("sigmoid")},
      {"Conv2d_tanh_epilogue", conv_epilogue("tanh")},
      {"Conv2d_leaky_relu_epilogue", conv_epilogue("leaky_relu", 0.1)},
      {"MatMul_bias_gelu_epilogue",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("MatMul", "mm");
         in(c, rnd(r, dt, {1, 13, 17}));
         in(c, rnd(r, dt, {17, 11}), true);
         in(c, rnd(r, dt, {11}), true);
         c.nb.output(dt, {1, 13, 11}).attr_str("activation", "gelu");
       }},
      {"Gemm_C_gelu_tanh_epilogue",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {7, 5}));
         in(c, rnd(r, dt, {6, 5}), true);
         in(c, rnd(r, dt, {6}), true);
         c.nb.output(dt, {7, 6}).attr_int("transB", 1).attr_str("activation", "gelu_tanh");
       }},
      {"MatMul_2d", binary("MatMul", {13, 17}, {17, 11}, {13, 11})},
      // A Linear on [seq, batch, features] with a constant weight, as torch's
      // attention exports it: one GEMM over every row (onednn also pads the
      // weight's rows, ops_contraction.cpp).
      {"MatMul_seq_first_linear_constant_weight",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("MatMul", "mm");
         in(c, rnd(r, dt, {9, 1, 24}));
         in(c, rnd(r, dt, {24, 16}), true);
         c.nb.output(dt, {9, 1, 16});
       }},
      {"MatMul_batch_broadcast", binary("MatMul", {2, 1, 5, 7}, {3, 7, 4}, {2, 3, 5, 4})},
      {"Gemm_trans_alpha_beta_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {5, 7}));
         in(c, rnd(r, dt, {6, 5}), true);
         in(c, rnd(r, dt, {6}));
         c.nb.output(dt, {7, 6})
             .attr_int("transA", 1)
             .attr_int("transB", 1)
             .attr_float("alpha", 0.5)
             .attr_float("beta", 2.0);
       }},
      {"Gemm_trans_only",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {5, 7}));
         in(c, rnd(r, dt, {6, 5}));
         c.nb.output(dt, {7, 6}).attr_int("transA", 1).attr_int("transB", 1);
       }},
      {"Gemm_alpha_beta_C_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {7, 5}));
         in(c, rnd(r, dt, {5, 6}));
         in(c, rnd(r, dt, {7, 1}));
         c.nb.output(dt, {7, 6}).attr_float("alpha", 0.5).attr_float("beta", 2.0);
       }},
      {"Gemm_full_C",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {7, 5}));
         in(c, rnd(r, dt, {5, 6}));
         in(c, rnd(r, dt, {7, 6}));
         c.nb.output(dt, {7, 6});
       }},
      {"Gemm_no_C_alpha",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {3, 9}));
         in(c, rnd(r, dt, {9, 4}));
         c.nb.output(dt, {3, 4}).attr_float("alpha", -1.5);
       }},
      {"Relu", unary("Relu", {3, 5, 7})},
      {"Sigmoid", unary("Sigmoid", {3, 5, 7})},
      {"Tanh", unary("Tanh", {3, 5, 7})},
      {"Gelu_erf", unary("Gelu", {3, 5, 7})},
      {"Gelu_tanh", unary("Gelu", {3, 5, 7}, [](NodeBuilder& b) {
         b.attr_str("approximate", "tanh");
       })},
      {"Clip", unary("Clip", {3, 5, 7}, [](NodeBuilder& b) {
         b.attr_float("min", -0.3).attr_float("max", 0.5);
       })},
      {"Add_broadcast", binary("Add", {2, 3, 4}, {3, 1}, {2, 3, 4})},
      {"Add_first_broadcasts", binary("Add", {3, 1}, {2, 3, 4}, {2, 3, 4})},
      {"Sub_broadcast", binary("Sub", {2, 3, 4}, {4}, {2, 3, 4})},
      {"Sub_first_broadcasts", binary("Sub", {3, 1}, {2, 3, 4}, {2, 3, 4})},
      {"Mul_first_broadcasts", binary("Mul", {1, 4}, {3, 4}, {3, 4})},
      {"Div", binary("Div", {2, 3, 5}, {2, 3, 5}, {2, 3, 5})},
      {"Softmax_axis1", unary("Softmax", {3, 4, 5}, [](NodeBuilder& b) { b.attr_int("axis", 1); })},
      {"Softmax_last", unary("Softmax", {3, 4, 5})},
      {"BatchNorm",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BatchNorm", "bn");
         in(c, rnd(r, dt, {2, 3, 5, 4}));
         in(c, rnd(r, dt, {3}), true);
         in(c, rnd(r, dt, {3}), true);
         in(c, rnd(r, dt, {3}));
         std::vector<double> var{0.5, 1.25, 2.0};
         in(c, Tensor::of(dt, {3}, var));
         c.nb.output(dt, {2, 3, 5, 4}).attr_float("epsilon", 1e-3);
       }},
      {"BatchNorm_relu_epilogue",  // DenseNet's pre-activation BN -> ReLU, fused
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BatchNorm", "bn");
         in(c, rnd(r, dt, {2, 16, 5, 4}));
         for (int i = 0; i < 3; ++i) in(c, rnd(r, dt, {16}), true);
         in(c, Tensor::of(dt, {16}, std::vector<double>(16, 0.75)), true);
         c.nb.output(dt, {2, 16, 5, 4}).attr_str("activation", "relu");
       }},
      {"BatchNorm_2d",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BatchNorm", "bn");
         in(c, rnd(r, dt, {5, 3}));
         for (int i = 0; i < 3; ++i) in(c, rnd(r, dt, {3}));
         in(c, Tensor::of(dt, {3}, {0.25, 1.0, 3.0}));
         c.nb.output(dt, {5, 3});
       }},
      {"LayerNorm_last_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {2, 3, 8}));
         in(c, rnd(r, dt, {8}));
         in(c, rnd(r, dt, {8}));
         c.nb.output(dt, {2, 3, 8});
       }},
      {"LayerNorm_axis1_no_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {2, 3, 8}));
         in(c, rnd(r, dt, {3, 8}));
         c.nb.output(dt, {2, 3, 8}).attr_int("axis", 1).attr_float("epsilon", 1e-4);
       }},
      {"MaxPool_ceil", pool("MaxPool", 1, 0)},
      {"AveragePool_ceil_exclude", pool("AveragePool", 1, 0)},
      {"AveragePool_include_pad",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("AveragePool", "ap");
         in(c, rnd(r, dt, {1, 3, 6, 7}));
         c.nb.output(dt, {1, 3, 4, 4})
             .attr_ints("kernel_shape", {2, 3})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 1, 1, 1})
             .attr_int("count_include_pad", 1);
       }},
      {"MaxPool_dilated", dilated_pool("MaxPool", 1, 0)},
      {"AveragePool_dilated_exclude", dilated_pool("AveragePool", 1, 0)},
      {"AveragePool_dilated_include_pad", dilated_pool("AveragePool", 0, 1)},
      {"AveragePool_dilated_ceil_include_pad", dilated_pool("AveragePool", 1, 1)},
      {"GlobalAveragePool",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GlobalAveragePool", "gap");
         in(c, rnd(r, dt, {2, 3, 5, 6}));
         c.nb.output(dt, {2, 3, 1, 1});
       }},
      {"ReduceMean_axis1_keep",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceMean", "rm");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {2, 1, 4}).attr_ints("axes", {1});
       }},
      {"ReduceSum_axes_drop",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceSum", "rs");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {3}).attr_ints("axes", {0, -1}).attr_int("keepdims", 0);
       }},
      {"ReduceMean_all",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceMean", "rm");
         in(c, rnd(r, dt, {3, 5}));
         c.nb.output(dt, {1, 1});
       }},
      {"Transpose_perm",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Transpose", "t");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {4, 2, 3}).attr_ints("perm", {2, 0, 1});
       }},
      {"Transpose_default",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Transpose", "t");
         in(c, rnd(r, dt, {2, 3, 5}));
         c.nb.output(dt, {5, 3, 2});
       }},
      {"Concat",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Concat", "cat");
         in(c, rnd(r, dt, {2, 3, 4}));
         in(c, rnd(r, dt, {2, 1, 4}));
         in(c, rnd(r, dt, {2, 2, 4}));
         c.nb.output(dt, {2, 6, 4}).attr_int("axis", 1);
       }},
      {"Reshape",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Reshape", "r");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {4, 6}).attr_ints("shape", {4, -1});
       }},
      {"Flatten",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Flatten", "f");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {2, 12});
       }},
      {"Dropout", unary("Dropout", {3, 7})},
      {"Slice",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Slice", "s");
         in(c, rnd(r, dt, {4, 6}));
         c.nb.output(dt, {2, 2})
             .attr_ints("starts", {1, -1})
             .attr_ints("ends", {3, 0})
             .attr_ints("axes", {0, 1})
             .attr_ints("steps", {1, -3});
       }},
      {"Gather",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gather", "g");
         in(c, rnd(r, dt, {5, 3}));
         in(c, Tensor::of(I64, {2, 2}, {4, 0, -1, 2}));
         c.nb.output(dt, {2, 2, 3});
       }},
      {"Gemm_multi_tile_bias_row",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {70, 45}));
         in(c, rnd(r, dt, {33, 45}), true);
         in(c, rnd(r, dt, {33}), true);
         c.nb.output(dt, {70, 33}).attr_int("transB", 1);
       }},
      {"MatMul_multi_tile", binary("MatMul", {3, 67, 40}, {40, 81}, {3, 67, 81})},
      // K and N multiples of 4: the register-blocked kernel's 4-wide loads
      // (gemm_cpu.comp modes 1 and 2), with ragged M and N edges.
      {"MatMul_vec4_rows", binary("MatMul", {2, 37, 44}, {44, 52}, {2, 37, 52})},
      // More than 3 workgroups in x and y for either kernel family.
      {"MatMul_wide_grid", binary("MatMul", {2, 200, 8}, {8, 300}, {2, 200, 300})},
      {"Gemm_vec4_transB_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {29, 36}));
         in(c, rnd(r, dt, {21, 36}), true);
         in(c, rnd(r, dt, {21}), true);
         c.nb.output(dt, {29, 21}).attr_int("transB", 1);
       }},
      // transA with M and N multiples of 4 but not of 8 (a weight gradient
      // X^T dY): gemm_cpu.comp mode 3's outer products, edge quads clamped.
      {"Gemm_vec4_transA_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {13, 36}));
         in(c, rnd(r, dt, {13, 44}));
         in(c, rnd(r, dt, {44}), true);
         c.nb.output(dt, {36, 44}).attr_int("transA", 1);
       }},
      {"Conv2d_depthwise_multiplier",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "dw");
         in(c, rnd(r, dt, {2, 3, 9, 7}));
         in(c, rnd(r, dt, {6, 1, 3, 3}), true);
         in(c, rnd(r, dt, {6}), true);
         c.nb.output(dt, {2, 6, 5, 4})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 1, 1, 1})
             .attr_int("group", 3);
       }},
      {"Conv2d_multi_tile",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {1, 5, 11, 13}));
         in(c, rnd(r, dt, {70, 5, 3, 3}), true);
         c.nb.output(dt, {1, 70, 11, 13}).attr_ints("pads", {1, 1, 1, 1});
       }},
      {"Softmax_long_rows", unary("Softmax", {3, 301})},
      {"LayerNorm_long_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {3, 203}));
         in(c, rnd(r, dt, {203}));
         in(c, rnd(r, dt, {203}));
         c.nb.output(dt, {3, 203});
       }},
      {"Relu_many_groups", unary("Relu", {3, 333, 7})},
      {"Gather_i32_axis1",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gather", "g");
         in(c, rnd(r, dt, {2, 5, 3}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {3}, {4, -5, 2}));
         c.nb.output(dt, {2, 3, 3}).attr_int("axis", 1);
       }},
      // Bigger shapes: tensor-core GEMM paths (bias epilogue, folded batch,
      // strided batch), cuDNN convolution, multi-warp block reductions.
      {"Gemm_bias_epilogue_large",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {96, 320}));
         in(c, rnd(r, dt, {200, 320}), true);
         in(c, rnd(r, dt, {200}), true);
         c.nb.output(dt, {96, 200}).attr_int("transB", 1);
       }},
      {"MatMul_folded_batch", binary("MatMul", {4, 33, 128}, {128, 72}, {4, 33, 72})},
      {"MatMul_strided_batch", binary("MatMul", {3, 32, 48}, {3, 48, 40}, {3, 32, 40})},
      {"Conv2d_cudnn_3x3_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {2, 32, 12, 12}));
         in(c, rnd(r, dt, {48, 32, 3, 3}, 0.2), true);
         in(c, rnd(r, dt, {48}), true);
         c.nb.output(dt, {2, 48, 12, 12}).attr_ints("pads", {1, 1, 1, 1});
       }},
      {"Softmax_long_row", unary("Softmax", {6, 1000})},
      {"LayerNorm_wide",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {16, 1024}));
         in(c, rnd(r, dt, {1024}));
         in(c, rnd(r, dt, {1024}));
         c.nb.output(dt, {16, 1024});
       }},
      {"ReduceSum_long",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceSum", "rs");
         in(c, rnd(r, dt, {8, 3000}));
         c.nb.output(dt, {8, 1}).attr_ints("axes", {1});
       }},
      {"Relu_vectorised_tail", unary("Relu", {1027})},
      {"Add_same_shape_vectorised", binary("Add", {4, 257}, {4, 257}, {4, 257})},
      // The ops of the ONNX importer (docs/OPS.md), odd shapes.
      {"ConvTranspose_stride_pad_outpad_group_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ConvTranspose", "ct");
         in(c, rnd(r, dt, {2, 4, 5, 3}));
         in(c, rnd(r, dt, {4, 3, 3, 3}), true);
         in(c, rnd(r, dt, {6}), true);
         // H: 2*4 + 1 + 2 + 1 - 1 - 1 = 10; W: 2*2 + 0 + 2 + 1 - 0 - 1 = 6
         c.nb.output(dt, {2, 6, 10, 6})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 0, 1, 1})
             .attr_ints("output_padding", {1, 0})
             .attr_int("group", 2);
       }},
      {"ConvTranspose_dilated_no_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ConvTranspose", "ct");
         in(c, rnd(r, dt, {1, 3, 4, 5}));
         in(c, rnd(r, dt, {3, 5, 2, 3}), true);
         c.nb.output(dt, {1, 5, 6, 9}).attr_ints("dilations", {2, 2});
       }},
      {"LeakyRelu", unary("LeakyRelu", {3, 5, 7}, [](NodeBuilder& b) { b.attr_float("alpha", 0.1); })},
      {"PRelu_channel_slope", binary("PRelu", {2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5})},
      {"HardSigmoid", unary("HardSigmoid", {3, 5, 7}, [](NodeBuilder& b) {
         b.attr_float("alpha", 0.25).attr_float("beta", 0.4);
       })},
      {"HardSwish", unary("HardSwish", {3, 5, 7})},
      {"Erf", unary("Erf", {3, 5, 7})},
      {"Exp", unary("Exp", {3, 5, 7})},
      {"Neg", unary("Neg", {3, 5, 7})},
      {"Reciprocal", unary("Reciprocal", {3, 5, 7})},
      {"Sqrt",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Sqrt", "n");
         std::vector<double> v = r.nonzero_vec(105);
         for (auto& x : v) x = std::fabs(x) * 3;
         in(c, Tensor::of(dt, {3, 5, 7}, v));
         c.nb.output(dt, {3, 5, 7});
       }},
      {"Log",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Log", "n");
         std::vector<double> v = r.nonzero_vec(105);
         for (auto& x : v) x = std::fabs(x) * 3;
         in(c, Tensor::of(dt, {3, 5, 7}, v));
         c.nb.output(dt, {3, 5, 7});
       }},
      {"Pow_broadcast",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pow", "n");
         std::vector<double> v = r.nonzero_vec(15);
         for (auto& x : v) x = std::fabs(x) * 2;
         in(c, Tensor::of(dt, {3, 1, 5}, v));
         in(c, rnd(r, dt, {4, 1}, 2.0));
         c.nb.output(dt, {3, 4, 5});
       }},
      {"Pow_constant_square",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pow", "n");
         in(c, rnd(r, dt, {3, 7}));
         in(c, Tensor::of(dt, {}, {2.0}), true);
         c.nb.output(dt, {3, 7});
       }},
      {"Where_broadcast",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Where", "n");
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {3, 1}, {1, 0, 1}));
         in(c, rnd(r, dt, {2, 1, 5}));
         in(c, rnd(r, dt, {5}));
         c.nb.output(dt, {2, 3, 5});
       }},
      {"Equal_broadcast",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Equal", "n");
         Tensor a = rnd(r, dt, {4, 5}), b = rnd(r, dt, {5});
         for (size_t i = 0; i < 5; i += 2) b.set(i, a.get(5 + i));  // some equal
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_BOOL, {4, 5});
       }},
      {"LogSoftmax_axis1", unary("LogSoftmax", {3, 4, 5}, [](NodeBuilder& b) {
         b.attr_int("axis", 1);
       })},
      {"LogSoftmax_last", unary("LogSoftmax", {3, 301})},
      {"ReduceMax_axes_drop",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceMax", "n");
         in(c, rnd(r, dt, {2, 3, 5}));
         c.nb.output(dt, {3}).attr_ints("axes", {0, -1}).attr_int("keepdims", 0);
       }},
      {"ReduceMax_axis1_keep",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceMax", "n");
         in(c, rnd(r, dt, {2, 7, 3}));
         c.nb.output(dt, {2, 1, 3}).attr_ints("axes", {1});
       }},
      {"ArgMax_axis1",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ArgMax", "n");
         in(c, rnd(r, dt, {3, 7, 5}));
         c.nb.output(I64, {3, 1, 5}).attr_int("axis", 1);
       }},
      {"ArgMax_last_index_drop",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ArgMax", "n");
         in(c, Tensor::of(dt, {2, 4}, {1, 3, 3, 2, 5, 5, 0, 5}));
         c.nb.output(I64, {2}).attr_int("axis", -1).attr_int("keepdims", 0).attr_int(
             "select_last_index", 1);
       }},
      {"Split_three",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Split", "n");
         in(c, rnd(r, dt, {2, 7, 3}));
         c.nb.output(dt, {2, 2, 3})
             .output(dt, {2, 1, 3})
             .output(dt, {2, 4, 3})
             .attr_int("axis", 1)
             .attr_ints("split", {2, 1, 4});
       }},
      {"Expand_bidirectional",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Expand", "n");
         in(c, rnd(r, dt, {3, 1}));
         c.nb.output(dt, {2, 3, 5}).attr_ints("shape", {2, 1, 5});
       }},
      {"Pad_constant",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, rnd(r, dt, {2, 3, 5}));
         c.nb.output(dt, {2, 5, 4})
             .attr_ints("pads", {0, 1, 0, 0, 1, -1})
             .attr_float("value", 0.5);
       }},
      {"Pad_reflect",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, rnd(r, dt, {1, 2, 4, 5}));
         c.nb.output(dt, {1, 2, 7, 7})
             .attr_ints("pads", {0, 0, 2, 1, 0, 0, 1, 1})
             .attr_str("mode", "reflect");
       }},
      {"Pad_edge",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, rnd(r, dt, {3, 4}));
         c.nb.output(dt, {6, 5}).attr_ints("pads", {1, 0, 2, 1}).attr_str("mode", "edge");
       }},
      {"Resize_nearest_asymmetric_floor",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 3, 5, 4}));
         c.nb.output(dt, {1, 3, 10, 8})
             .attr_ints("sizes", {1, 3, 10, 8})
             .attr_str("coordinate_transformation_mode", "asymmetric")
             .attr_str("nearest_mode", "floor");
       }},
      {"Resize_nearest_half_pixel_down",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {2, 2, 7, 5}));
         c.nb.output(dt, {2, 2, 3, 4}).attr_ints("sizes", {2, 2, 3, 4});
       }},
      {"Resize_linear_half_pixel",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {2, 3, 5, 4}));
         c.nb.output(dt, {2, 3, 9, 7}).attr_ints("sizes", {2, 3, 9, 7}).attr_str("mode", "linear");
       }},
      {"Resize_linear_align_corners",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 2, 4, 6}));
         c.nb.output(dt, {1, 2, 7, 3})
             .attr_ints("sizes", {1, 2, 7, 3})
             .attr_str("mode", "linear")
             .attr_str("coordinate_transformation_mode", "align_corners");
       }},
      // Resize's general form (ONNX's own scales, cubic, antialias, the
      // crop): cpu_ref's tap loop on every backend that runs it.
      {"Resize_general_cubic_scales",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 2, 5, 4}));
         c.nb.output(dt, {1, 2, 8, 2})  // floor(5 * 1.7), floor(4 * 0.6)
             .attr_ints("sizes", {1, 2, 8, 2})
             .attr_floats("scales", {1, 1, 1.7, 0.6})
             .attr_str("mode", "cubic");
       }},
      {"Resize_general_cubic_antialias_exclude_outside",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {2, 1, 9, 7}));
         c.nb.output(dt, {2, 1, 4, 3})
             .attr_ints("sizes", {2, 1, 4, 3})
             .attr_str("mode", "cubic")
             .attr_float("cubic_coeff_a", -0.5)
             .attr_int("exclude_outside", 1)
             .attr_int("antialias", 1);
       }},
      {"Resize_general_linear_antialias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 3, 8, 6}));
         c.nb.output(dt, {1, 3, 3, 4})
             .attr_ints("sizes", {1, 3, 3, 4})
             .attr_str("mode", "linear")
             .attr_int("antialias", 1);
       }},
      {"Resize_general_tf_crop_and_resize",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 2, 6, 5}));
         c.nb.output(dt, {1, 2, 4, 7})
             .attr_ints("sizes", {1, 2, 4, 7})
             .attr_str("mode", "linear")
             .attr_str("coordinate_transformation_mode", "tf_crop_and_resize")
             .attr_floats("roi", {0, 0, 0.2, -0.1, 1, 1, 0.9, 1.3})
             .attr_float("extrapolation_value", 2.5);
       }},
      {"Resize_general_nearest_half_pixel_symmetric",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 2, 5, 3}));
         c.nb.output(dt, {1, 2, 3, 4})  // floor(5 * 0.7), floor(3 * 1.5)
             .attr_ints("sizes", {1, 2, 3, 4})
             .attr_floats("scales", {1, 1, 0.7, 1.5})
             .attr_str("coordinate_transformation_mode", "half_pixel_symmetric");
       }},
      // MaxPoolIndices: ceil_mode windows past the padding; a dilated window
      // numbered column-major.
      {"MaxPoolIndices_ceil",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("MaxPoolIndices", "n");
         in(c, rnd(r, dt, {1, 2, 7, 6}));
         c.nb.output(I64, {1, 2, 4, 3})
             .attr_ints("kernel_shape", {3, 2})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 0, 1, 1})
             .attr_int("ceil_mode", 1);
       }},
      {"MaxPoolIndices_dilated_column_major",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("MaxPoolIndices", "n");
         in(c, rnd(r, dt, {2, 2, 7, 6}));
         c.nb.output(I64, {2, 2, 6, 3})
             .attr_ints("kernel_shape", {2, 2})
             .attr_ints("strides", {1, 2})
             .attr_ints("pads", {1, 2, 0, 1})
             .attr_ints("dilations", {2, 3})
             .attr_int("storage_order", 1);
       }},
      // A dilated window whose taps step over X (rows -2 and 1 of a 1-row
      // X): no cell, index -1 (MaxPool's value there is the padding's -inf).
      {"MaxPoolIndices_window_misses_x",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("MaxPoolIndices", "n");
         in(c, rnd(r, dt, {1, 2, 1, 4}));
         c.nb.output(I64, {1, 2, 1, 3})
             .attr_ints("kernel_shape", {2, 2})
             .attr_ints("pads", {2, 0, 1, 0})
             .attr_ints("dilations", {3, 1});
       }},
      // Ties everywhere (values in {-2, ..., 2}: the window's first maximum
      // wins) and two NaNs (the first NaN wins over any number).
      {"MaxPoolIndices_ties_nan",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("MaxPoolIndices", "n");
         Tensor x = rnd(r, dt, {1, 2, 6, 6});
         for (size_t i = 0; i < static_cast<size_t>(x.numel()); ++i)
           x.set(i, std::round(x.get(i) * 1.5));
         x.set(8, NAN);
         x.set(9, NAN);
         x.set(50, NAN);
         in(c, std::move(x));
         c.nb.output(I64, {1, 2, 3, 3})
             .attr_ints("kernel_shape", {3, 3})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 1, 1, 1});
       }},
      // GridSample: grid points inside and past the edges (|g| up to 1.3).
      {"GridSample_linear_zeros",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {2, 3, 5, 4}));
         in(c, rnd(r, dt, {2, 3, 6, 2}, 1.3));
         c.nb.output(dt, {2, 3, 3, 6});
       }},
      {"GridSample_cubic_reflection_align_corners",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {1, 2, 4, 6}));
         in(c, rnd(r, dt, {1, 5, 3, 2}, 1.3));
         c.nb.output(dt, {1, 2, 5, 3})
             .attr_str("mode", "cubic")
             .attr_str("padding_mode", "reflection")
             .attr_int("align_corners", 1);
       }},
      {"GridSample_nearest_border",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {1, 2, 4, 5}));
         in(c, rnd(r, dt, {1, 3, 4, 2}, 1.3));
         c.nb.output(dt, {1, 2, 3, 4})
             .attr_str("mode", "nearest")
             .attr_str("padding_mode", "border");
       }},
      {"GridSample_volumetric_linear_border",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {1, 2, 3, 4, 5}));
         in(c, rnd(r, dt, {1, 2, 3, 2, 3}, 1.3));
         c.nb.output(dt, {1, 2, 2, 3, 2}).attr_str("padding_mode", "border");
       }},
      // Grid values on multiples of 1/4 (exact in f16): many coordinates land
      // on halves (nearest rounds them to even) and past the edges
      // (reflected back onto whole pixels).
      {"GridSample_nearest_reflection_halves",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {1, 2, 4, 5}));
         Tensor g = rnd(r, dt, {1, 4, 5, 2}, 1.5);
         for (size_t i = 0; i < static_cast<size_t>(g.numel()); ++i)
           g.set(i, std::round(g.get(i) * 4) / 4);
         in(c, std::move(g));
         c.nb.output(dt, {1, 2, 4, 5})
             .attr_str("mode", "nearest")
             .attr_str("padding_mode", "reflection");
       }},
      // Linear, reflected several times (|g| up to 2.5), edges not corners.
      {"GridSample_linear_reflection",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {2, 2, 3, 4}));
         in(c, rnd(r, dt, {2, 3, 5, 2}, 2.5));
         c.nb.output(dt, {2, 2, 3, 5}).attr_str("padding_mode", "reflection");
       }},
      // One spatial axis, cubic taps read as zeros past the edges.
      {"GridSample_1d_cubic_zeros",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {2, 3, 7}));
         in(c, rnd(r, dt, {2, 5, 1}, 1.3));
         c.nb.output(dt, {2, 3, 5}).attr_str("mode", "cubic").attr_int("align_corners", 1);
       }},
      // Det: a batch of 4x4 matrices, and a single 1x1 one (a scalar out).
      {"Det_batched",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Det", "n");
         in(c, rnd(r, dt, {2, 3, 4, 4}));
         c.nb.output(dt, {2, 3});
       }},
      {"Det_1x1",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Det", "n");
         in(c, rnd(r, dt, {1, 1}));
         c.nb.output(dt, {});
       }},
      // GridSample with nearest taps reflected (align_corners 0, points up to
      // 2.5 past the edges: several reflections) and cubic 3-D zeros padding.
      {"GridSample_nearest_reflection_far",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {1, 2, 3, 5}));
         in(c, rnd(r, dt, {1, 4, 3, 2}, 2.5));
         c.nb.output(dt, {1, 2, 4, 3})
             .attr_str("mode", "nearest")
             .attr_str("padding_mode", "reflection");
       }},
      {"GridSample_volumetric_cubic_zeros",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GridSample", "n");
         in(c, rnd(r, dt, {1, 2, 3, 4, 4}));
         in(c, rnd(r, dt, {1, 2, 2, 3, 3}, 1.2));
         c.nb.output(dt, {1, 2, 2, 2, 3}).attr_str("mode", "cubic");
       }},
      // Det: an exactly singular matrix (0) and one that needs row swaps
      // (det 1), then 12 x 12 matrices (many pivots).
      {"Det_singular_and_pivoting",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Det", "n");
         in(c, Tensor::of(dt, {2, 3, 3},
                          {1, 2, 3, 2, 4, 6, 1, 0, 1, 0, 1, 2, 3, 1, 0, 1, 1, 1}));
         c.nb.output(dt, {2});
       }},
      {"Det_12x12",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Det", "n");
         in(c, rnd(r, dt, {3, 12, 12}));
         c.nb.output(dt, {3});
       }},
      // Pivoting and singular matrices: matrix 0 has a zero first column
      // entry on the diagonal (a row swap), matrix 1 two equal rows (an
      // exactly zero pivot: 0), matrix 2 a zero column (0), matrix 3 is
      // nearly singular (row 4 = row 0 + 2^-10 row 1: a tiny pivot, exact in
      // f16) and matrix 4 random.
      {"Det_pivoting_singular",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Det", "n");
         Tensor x = rnd(r, dt, {5, 5, 5});
         auto at = [](size_t m, size_t i, size_t j) { return m * 25 + i * 5 + j; };
         x.set(at(0, 0, 0), 0);
         for (size_t j = 0; j < 5; ++j) {
           x.set(at(1, 3, j), x.get(at(1, 1, j)));
           x.set(at(2, j, 2), 0);
           x.set(at(3, 4, j), x.get(at(3, 0, j)) + std::ldexp(x.get(at(3, 1, j)), -10));
         }
         in(c, std::move(x));
         c.nb.output(dt, {5});
       }},
      // The largest matrices the Vulkan kernel takes (M = 64) and a middle
      // size; entries scaled so the determinants stay in f16's range.
      {"Det_large",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Det", "n");
         in(c, rnd(r, dt, {2, 64, 64}, 0.4));
         c.nb.output(dt, {2});
       }},
      {"Det_13x13",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Det", "n");
         in(c, rnd(r, dt, {3, 13, 13}));
         c.nb.output(dt, {3});
       }},
      // Col2Im: strides, dilations and uneven pads on a 2-D image (L = 4 * 3
      // block positions), and a 1-D one with overlapping blocks.
      {"Col2Im_2d_strided_dilated_padded",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Col2Im", "n");
         in(c, rnd(r, dt, {2, 12, 12}));
         c.nb.output(dt, {2, 2, 5, 6})
             .attr_ints("image_shape", {5, 6})
             .attr_ints("block_shape", {2, 3})
             .attr_ints("strides", {1, 2})
             .attr_ints("dilations", {2, 1})
             .attr_ints("pads", {1, 0, 0, 1});
       }},
      {"Col2Im_1d_overlapping",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Col2Im", "n");
         in(c, rnd(r, dt, {1, 6, 5}));
         c.nb.output(dt, {1, 2, 7}).attr_ints("image_shape", {7}).attr_ints("block_shape", {3});
       }},
      // A 3-D image: a stride, a dilation and pads on different axes (block
      // positions 3 x 2 x 3).
      {"Col2Im_3d",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Col2Im", "n");
         in(c, rnd(r, dt, {1, 24, 18}));
         c.nb.output(dt, {1, 2, 3, 4, 5})
             .attr_ints("image_shape", {3, 4, 5})
             .attr_ints("block_shape", {2, 2, 3})
             .attr_ints("strides", {1, 2, 1})
             .attr_ints("dilations", {1, 1, 2})
             .attr_ints("pads", {0, 1, 1, 1, 0, 1});
       }},
      // The later ONNX ops (is_reference_only_op), odd shapes.
      {"Floor", unary("Floor", {3, 5, 7})},
      {"Ceil", unary("Ceil", {3, 5, 7})},
      {"Round", unary("Round", {3, 5, 7})},
      {"Abs", unary("Abs", {3, 5, 7})},
      {"Softplus", unary("Softplus", {3, 5, 7})},
      {"Mish", unary("Mish", {3, 5, 7})},
      {"Sin", unary("Sin", {3, 5, 7})},
      {"Cos", unary("Cos", {3, 5, 7})},
      {"Tan", unary("Tan", {3, 5, 7})},
      {"Asin", unary("Asin", {3, 5, 7})},
      {"Acos", unary("Acos", {3, 5, 7})},
      {"Atan", unary("Atan", {3, 5, 7})},
      {"Sinh", unary("Sinh", {3, 5, 7})},
      {"Cosh", unary("Cosh", {3, 5, 7})},
      {"Asinh", unary("Asinh", {3, 5, 7})},
      {"Atanh", unary("Atanh", {3, 5, 7})},
      {"Acosh",  // its domain is x >= 1
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Acosh", "n");
         std::vector<double> v = r.nonzero_vec(105);
         for (auto& x : v) x = std::fabs(x) * 3 + 1;
         in(c, Tensor::of(dt, {3, 5, 7}, v));
         c.nb.output(dt, {3, 5, 7});
       }},
      // Sin ... Atanh where a textbook formula or a GPU builtin goes wrong:
      // arguments far beyond pi (the reduction by pi/2 must be exact; f16
      // makes the largest infinity, so NaN), sinh/cosh at and past f32
      // overflow (89.4: finite in f32, where e^x overflows past 88.7; no
      // further, as the float64 mode's results would not overflow) and near 0, asinh of negative x (ln(x + sqrt(x^2 +
      // 1)) cancels), acosh below 1 (NaN) and near it, atanh at and near
      // +-1 (+-inf) and past it (NaN), asin/acos/atan at their edges.
      {"Sin_large_arguments", unary_values("Sin", {1e4, -1e4, 65504, 3e5, 1e10, 3.4e38, -2.5e7,
                                                   100, 1e6, 12345.678, -0.0, 7, 0.78, -0.8,
                                                   1.5707964, 3.1415927})},
      {"Cos_large_arguments", unary_values("Cos", {1e4, -1e4, 65504, 3e5, 1e10, 3.4e38, -2.5e7,
                                                   100, 1e6, 12345.678, -0.0, 7, 0.78, -0.8,
                                                   1.5707964, 3.1415927})},
      {"Tan_large_arguments",
       unary_values("Tan", {1e4, -1e4, 3e5, 1e10, -2.5e7, 100, 1e6, 12345.678, -0.0, 0.78, -0.8,
                            1.5, -1.55, 3.1415927, 40000, -7})},
      {"Sinh_overflow_and_tiny", unary_values("Sinh", {-89.4, 89.2, 88.5, -88.9, 80, 50, 20, 9, -1,
                                                       1e-3, -1e-4, 0.5, -0.99, 1e-7, 0, 12})},
      {"Sinh_near_zero",
       unary_values("Sinh", {1e-3, -1e-4, 0.5, -0.9, 1e-6, 0.01, -0.3, 1.0, 0.125, -2e-8})},
      {"Cosh_overflow", unary_values("Cosh", {-89.4, 89.2, 88.5, -88.9, 80, 50, 20, 9, -1, 1e-3,
                                              -1e-4, 0.5, -0.99, 0, 12, 1.5})},
      {"Asinh_negative", unary_values("Asinh", {-1e3, -100, -10, -1, -0.1, -1e-3, 1e-3, 10, -3.5,
                                                -0.6, 0.25, -1e-6, 7})},
      {"Asinh_huge", unary_values("Asinh", {-3e38, 1e20, -1e19, 5e18, 1e10, -65000, 2})},
      {"Acosh_edges", unary_values("Acosh", {0.5, 1, 1.0001, 1.5, 2, 0, -3, 1e20, 1e5, 3e38,
                                             1.01, 10})},
      {"Atanh_edges", unary_values("Atanh", {0.999, -0.9999, 1, -1, 0.5, 1e-4, 1.5, -2, 0,
                                             -0.3, 0.9, -1e-7})},
      {"Asin_edges", unary_values("Asin", {1, -1, 0.5, -0.5, 0.51, -0.49, 0.99999,
                                                     -0.999, 1.0001, -2, 0, 1e-5})},
      {"Acos_edges", unary_values("Acos", {1, -1, 0.5, -0.5, 0.51, -0.49, 0.99999,
                                                     -0.999, 1.0001, -2, 0, 1e-5})},
      {"Atan_large", unary_values("Atan", {1e30, -1e30, 2.5, -2.3, 0.42, -0.4, 1e-6, 0, 3e38,
                                           -1, 1, 100})},
      {"Less_broadcast", compare("Less")},
      {"Greater_broadcast", compare("Greater")},
      {"LessOrEqual_broadcast", compare("LessOrEqual")},
      {"GreaterOrEqual_broadcast", compare("GreaterOrEqual")},
      {"Not",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Not", "n");
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {2, 3}, {1, 0, 0, 1, 1, 0}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 3});
       }},
      {"And_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("And", "n");
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {2, 3}, {1, 0, 1, 1, 1, 0}));
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {3}, {1, 1, 0}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 3});
       }},
      {"Or_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Or", "n");
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {2, 1}, {0, 1}));
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {3}, {0, 1, 0}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 3});
       }},
      {"Min_three_broadcast", variadic("Min", {{2, 3, 4}, {3, 1}, {4}}, {2, 3, 4})},
      {"Max_two_broadcast", variadic("Max", {{3, 1}, {2, 1, 5}}, {2, 3, 5})},
      {"Max_one", variadic("Max", {{3, 5}}, {3, 5})},
      {"Sum_three_broadcast", variadic("Sum", {{2, 3, 4}, {3, 4}, {1}}, {2, 3, 4})},
      {"Mean_two_broadcast", variadic("Mean", {{2, 1, 4}, {3, 1}}, {2, 3, 4})},
      {"ReduceMin_axes_drop", reduce("ReduceMin", {0, -1}, 0, {3})},
      {"ReduceProd_axis1_keep", reduce("ReduceProd", {1}, 1, {2, 1, 5}, 1.5)},
      {"ReduceL2_all", reduce("ReduceL2", {}, 1, {1, 1, 1})},
      {"ReduceSumSquare_axis2_drop", reduce("ReduceSumSquare", {2}, 0, {2, 3})},
      {"ReduceLogSumExp_axes_keep", reduce("ReduceLogSumExp", {0, 2}, 1, {1, 3, 1}, 3.0)},
      {"ArgMin_axis1",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ArgMin", "n");
         in(c, rnd(r, dt, {3, 7, 5}));
         c.nb.output(I64, {3, 1, 5}).attr_int("axis", 1);
       }},
      {"ArgMin_last_index_drop",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ArgMin", "n");
         in(c, Tensor::of(dt, {2, 4}, {1, 0, 0, 2, 5, -5, 0, -5}));
         c.nb.output(I64, {2}).attr_int("axis", -1).attr_int("keepdims", 0).attr_int(
             "select_last_index", 1);
       }},
      // Indexing, sorting and running sums (reference-only): negative
      // indices, broadcasting divisors, batch dims; TopK on distinct values
      // (exact in bf16), so its indices are the same in every dtype.
      {"Mod_fmod_broadcast",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Mod", "n");
         in(c, rnd(r, dt, {2, 3, 4}, 4.0));
         in(c, Tensor::of(dt, {4}, {0.75, -1.5, 2.0, 1.25}));
         c.nb.output(dt, {2, 3, 4}).attr_int("fmod", 1);
       }},
      // fmod=0 on floats (ONNX Mod 28): the divisor's sign.
      {"Mod_floor_float_broadcast",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Mod", "n");
         in(c, rnd(r, dt, {2, 3, 4}, 4.0));
         in(c, Tensor::of(dt, {4}, {0.75, -1.5, 2.0, -1.25}));
         c.nb.output(dt, {2, 3, 4});
       }},
      {"Mod_integer_sign_of_divisor",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Mod", "n");
         in(c, Tensor::of(I64, {2, 3}, {7, -7, 7, -7, 0, 9}));
         in(c, Tensor::of(I64, {3}, {3, 3, -3}));
         c.nb.output(I64, {2, 3});
       }},
      // The integer types and the bit ops (reference-only): every integer
      // width, ONNX opset 28's BitShift rule at the edges (negative and
      // too-large amounts, a negative x shifted right), wrapping
      // arithmetic, Cast into and out of the narrow and unsigned types, and
      // BitCast of the case's float dtype into the integer of its width.
      {"BitShift_left_u16_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(AMPX_DTYPE_U16, {2, 3}, {16, 4, 1, 65535, 3, 0}));
         in(c, Tensor::of(AMPX_DTYPE_U16, {3}, {1, 2, 15}));
         c.nb.output(AMPX_DTYPE_U16, {2, 3}).attr_str("direction", "LEFT");
       }},
      {"BitShift_right_i32_edges",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(AMPX_DTYPE_I32, {6}, {-16, -16, 16, -1, 7, -7}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {6}, {2, 40, 40, -1, 0, 31}));
         c.nb.output(AMPX_DTYPE_I32, {6}).attr_str("direction", "RIGHT");
       }},
      {"BitShift_left_u64",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(AMPX_DTYPE_U64, {4}, {1, 3, 5, 7}));
         in(c, Tensor::of(AMPX_DTYPE_U64, {4}, {0, 40, 63, 64}));
         c.nb.output(AMPX_DTYPE_U64, {4}).attr_str("direction", "LEFT");
       }},
      {"BitwiseAnd_u32_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseAnd", "n");
         in(c, Tensor::of(AMPX_DTYPE_U32, {2, 1}, {0xF0F0, 4000000000.0}));
         in(c, Tensor::of(AMPX_DTYPE_U32, {3}, {0xFF, 0xFFFF, 7}));
         c.nb.output(AMPX_DTYPE_U32, {2, 3});
       }},
      {"BitwiseOr_i8",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseOr", "n");
         in(c, Tensor::of(AMPX_DTYPE_I8, {4}, {-128, 1, 64, 0}));
         in(c, Tensor::of(AMPX_DTYPE_I8, {4}, {1, -2, 63, 0}));
         c.nb.output(AMPX_DTYPE_I8, {4});
       }},
      {"BitwiseXor_i64",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseXor", "n");
         in(c, Tensor::of(I64, {2, 2}, {-1, 5, 1 << 20, 0}));
         in(c, Tensor::of(I64, {2}, {3, -6}));
         c.nb.output(I64, {2, 2});
       }},
      {"BitwiseNot_i16",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseNot", "n");
         in(c, Tensor::of(AMPX_DTYPE_I16, {2, 2}, {0, -1, 32767, -32768}));
         c.nb.output(AMPX_DTYPE_I16, {2, 2});
       }},
      {"BitCast_float_to_integer",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BitCast", "n");
         in(c, rnd(r, dt, {3, 4}));
         const ampx_dtype to = dt == F32                ? AMPX_DTYPE_U32
                               : dt == AMPX_DTYPE_F64 ? AMPX_DTYPE_I64
                                                      : AMPX_DTYPE_I16;
         c.nb.output(to, {3, 4}).attr_int("to", to);
       }},
      // The bit ops on the dtypes backends store as words or bytes: i64
      // shifts across the word boundary, by 63, 64, more and negative
      // amounts, arithmetic right shifts of negative values; i8/u8 at
      // their width; i32 and u8 broadcast; BitCast between same-width
      // signed integers and floats, and between the byte types.
      {"BitShift_left_i64_edges",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(I64, {2, 5}, {1, 3, -3, 5, 0x7fffffff, -1, 123456789012.0, -7, 1, 9}));
         in(c, Tensor::of(I64, {2, 5}, {0, 31, 32, 33, 63, 64, 20, -1, 100, 1}));
         c.nb.output(I64, {2, 5}).attr_str("direction", "LEFT");
       }},
      {"BitShift_right_i64_edges_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(I64, {2, 1}, {-35184372088832.0, 35184372088833.0}));
         in(c, Tensor::of(I64, {6}, {0, 5, 32, 40, 64, -2}));
         c.nb.output(I64, {2, 6}).attr_str("direction", "RIGHT");
       }},
      {"BitShift_right_u8_edges",  // logical: 200 >> 1 is 100
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(AMPX_DTYPE_U8, {2, 3}, {255, 1, 128, 7, 200, 3}));
         in(c, Tensor::of(AMPX_DTYPE_U8, {3}, {1, 8, 7}));
         c.nb.output(AMPX_DTYPE_U8, {2, 3}).attr_str("direction", "RIGHT");
       }},
      {"BitShift_right_i8_edges",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(AMPX_DTYPE_I8, {6}, {-128, -1, 127, -7, -100, 64}));
         in(c, Tensor::of(AMPX_DTYPE_I8, {6}, {7, 8, -1, 1, 2, 9}));
         c.nb.output(AMPX_DTYPE_I8, {6}).attr_str("direction", "RIGHT");
       }},
      {"BitShift_left_i32_edges",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(AMPX_DTYPE_I32, {6}, {-16, 1, 3, -1, 7, 5}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {6}, {2, 31, 32, -1, 0, 30}));
         c.nb.output(AMPX_DTYPE_I32, {6}).attr_str("direction", "LEFT");
       }},
      {"BitwiseAnd_i32_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseAnd", "n");
         in(c, Tensor::of(AMPX_DTYPE_I32, {2, 1}, {-1, 0x0F0F0F0F}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {3}, {-2147483648.0, 255, -256}));
         c.nb.output(AMPX_DTYPE_I32, {2, 3});
       }},
      {"BitwiseOr_i64_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseOr", "n");
         in(c, Tensor::of(I64, {3}, {-4294967296.0, 1, 4294967296.0}));
         in(c, Tensor::of(I64, {2, 1}, {5, -8589934592.0}));
         c.nb.output(I64, {2, 3});
       }},
      {"BitwiseXor_u8_broadcast",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseXor", "n");
         in(c, Tensor::of(AMPX_DTYPE_U8, {2, 2}, {255, 0, 170, 15}));
         in(c, Tensor::of(AMPX_DTYPE_U8, {1}, {85}));
         c.nb.output(AMPX_DTYPE_U8, {2, 2});
       }},
      {"BitwiseNot_i64",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseNot", "n");
         in(c, Tensor::of(I64, {4}, {0, -1, 4294967296.0, -123456789012.0}));
         c.nb.output(I64, {4});
       }},
      {"BitwiseNot_i32",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseNot", "n");
         in(c, Tensor::of(AMPX_DTYPE_I32, {3}, {0, -2147483648.0, 12345}));
         c.nb.output(AMPX_DTYPE_I32, {3});
       }},
      {"BitwiseNot_u8",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseNot", "n");
         in(c, Tensor::of(AMPX_DTYPE_U8, {3}, {0, 255, 90}));
         c.nb.output(AMPX_DTYPE_U8, {3});
       }},
      {"BitCast_float_to_signed",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BitCast", "n");
         in(c, rnd(r, dt, {3, 4}));
         const ampx_dtype to = dt == F32                ? AMPX_DTYPE_I32
                               : dt == AMPX_DTYPE_F64 ? I64
                                                      : AMPX_DTYPE_I16;
         c.nb.output(to, {3, 4}).attr_int("to", to);
       }},
      {"BitCast_signed_to_float",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BitCast", "n");
         // 1.0f, -2.5f, a subnormal, 0, -0.0f, 3.0e38f (f32 bits); 1.0, -2.0,
         // a subnormal, 0, -0.0, 100.0 (f64); 1.0, -2.0, a subnormal, 0,
         // -0.0, 65504 (f16).
         in(c, dt == F32 ? Tensor::of(AMPX_DTYPE_I32, {6},
                                      {1065353216, -1071644672, 1, 0, -2147483648.0, 2133852341})
               : dt == AMPX_DTYPE_F64
                   ? Tensor::of(I64, {6},
                                {4607182418800017408.0, -4611686018427387904.0, 1, 0,
                                 -9223372036854775808.0, 4636737291354636288.0})
                   : Tensor::of(AMPX_DTYPE_I16, {6}, {15360, -16384, 1, 0, -32768, 31743}));
         c.nb.output(dt, {6}).attr_int("to", dt);
       }},
      {"BitCast_same_dtype",  // 16-bit floats: bits moved as they are
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BitCast", "n");
         in(c, rnd(r, dt, {7}));
         c.nb.output(dt, {7}).attr_int("to", dt);
       }},
      {"BitCast_i8_to_u8",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitCast", "n");
         in(c, Tensor::of(AMPX_DTYPE_I8, {5}, {-128, -1, 0, 1, 127}));
         c.nb.output(AMPX_DTYPE_U8, {5}).attr_int("to", AMPX_DTYPE_U8);
       }},
      {"Add_u16_wraps",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Add", "n");
         in(c, Tensor::of(AMPX_DTYPE_U16, {3}, {65535, 1, 40000}));
         in(c, Tensor::of(AMPX_DTYPE_U16, {3}, {1, 2, 40000}));
         c.nb.output(AMPX_DTYPE_U16, {3});
       }},
      {"Div_i16_truncates",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Div", "n");
         in(c, Tensor::of(AMPX_DTYPE_I16, {4}, {7, -7, -32768, 5}));
         in(c, Tensor::of(AMPX_DTYPE_I16, {4}, {2, 2, -1, 0}));
         c.nb.output(AMPX_DTYPE_I16, {4});
       }},
      {"Less_u64",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Less", "n");
         in(c, Tensor::of(AMPX_DTYPE_U64, {3}, {1, 9e18, 5}));
         in(c, Tensor::of(AMPX_DTYPE_U64, {1}, {6}));
         c.nb.output(AMPX_DTYPE_BOOL, {3});
       }},
      {"Cast_float_to_u16",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Cast", "n");
         in(c, Tensor::of(dt, {5}, {0.5, 3.75, 255, -2, 1000}));
         c.nb.output(AMPX_DTYPE_U16, {5}).attr_int("to", AMPX_DTYPE_U16);
       }},
      {"Cast_u32_to_float",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Cast", "n");
         in(c, Tensor::of(AMPX_DTYPE_U32, {4}, {0, 7, 1000, 3000000000.0}));
         c.nb.output(dt, {4}).attr_int("to", dt);
       }},
      {"CumSum_exclusive_reverse",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("CumSum", "n");
         in(c, rnd(r, dt, {3, 5, 4}));
         c.nb.output(dt, {3, 5, 4}).attr_int("axis", -2).attr_int("exclusive", 1).attr_int(
             "reverse", 1);
       }},
      {"CumProd_axis1",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("CumProd", "n");
         in(c, rnd(r, dt, {3, 5, 4}));
         c.nb.output(dt, {3, 5, 4}).attr_int("axis", 1);
       }},
      {"CumProd_exclusive_reverse",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("CumProd", "n");
         in(c, rnd(r, dt, {3, 5, 4}));
         c.nb.output(dt, {3, 5, 4}).attr_int("axis", -1).attr_int("exclusive", 1).attr_int(
             "reverse", 1);
       }},
      {"RMSNorm_last",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RMSNorm", "n");
         in(c, rnd(r, dt, {2, 3, 8}));
         in(c, rnd(r, dt, {8}));
         c.nb.output(dt, {2, 3, 8});
       }},
      {"RMSNorm_axis1_epsilon",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RMSNorm", "n");
         in(c, rnd(r, dt, {2, 3, 8}));
         in(c, rnd(r, dt, {3, 8}));
         c.nb.output(dt, {2, 3, 8}).attr_int("axis", 1).attr_float("epsilon", 0.1);
       }},
      {"RMSNorm_long_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RMSNorm", "n");
         in(c, rnd(r, dt, {3, 203}));
         in(c, rnd(r, dt, {203}));
         c.nb.output(dt, {3, 203});
       }},
      {"TopK_largest",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("TopK", "n");
         in(c, Tensor::of(dt, {2, 5}, {0.5, -2, 3.5, 1.25, -0.75, 4, 2.5, -1, 0.25, 3}));
         c.nb.output(dt, {2, 3}).output(I64, {2, 3}).attr_int("k", 3);
       }},
      {"TopK_smallest_axis0",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("TopK", "n");
         in(c, Tensor::of(dt, {4, 2}, {0.5, -2, 3.5, 1.25, -0.75, 4, 2.5, -1}));
         c.nb.output(dt, {2, 2}).output(I64, {2, 2}).attr_int("k", 2).attr_int("axis", 0).attr_int(
             "largest", 0);
       }},
      {"GatherElements_axis1_negative",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GatherElements", "n");
         in(c, rnd(r, dt, {2, 4, 3}));
         in(c, Tensor::of(I64, {2, 2, 3}, {0, -1, 3, 2, 1, -4, 3, 3, 0, -2, 1, 2}));
         c.nb.output(dt, {2, 2, 3}).attr_int("axis", 1);
       }},
      {"GatherND_batch_dims1",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GatherND", "n");
         in(c, rnd(r, dt, {2, 3, 4, 5}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {2, 2, 2}, {0, 1, 2, -1, 1, 3, 0, 0}));
         c.nb.output(dt, {2, 2, 5}).attr_int("batch_dims", 1);
       }},
      {"ScatterND_slices",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ScatterND", "n");
         in(c, rnd(r, dt, {4, 3, 2}));
         in(c, Tensor::of(I64, {2, 1}, {3, -4}));
         in(c, rnd(r, dt, {2, 3, 2}));
         c.nb.output(dt, {4, 3, 2});
       }},
      {"ScatterND_add_repeated",
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("ScatterND", "n");
         in(c, Tensor::of(AMPX_DTYPE_I32, {3, 2}, {1, 2, 3, 4, 5, 6}));
         in(c, Tensor::of(I64, {3, 2}, {0, 1, 2, 0, 0, 1}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {3}, {10, 20, 30}));
         c.nb.output(AMPX_DTYPE_I32, {3, 2}).attr_str("reduction", "add");
       }},
      // Attention (4-D, as the importer emits it): grouped-query heads with
      // a float mask, a KV cache's causal frontier and a softcap; a bool
      // mask with a fully masked row (Y and the probabilities 0 there) and
      // the post-softmax output; per-batch nonpad_kv_seqlen with the
      // bottom-right causal frontier and a window. RotaryEmbedding: 4-D with
      // position_ids, interleaved and partial; 3-D with i32 position_ids,
      // interleaved and partial; 3-D halves.
      {"Attention_gqa_mask_past_softcap",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {2, 4, 3, 8}));
         in(c, rnd(r, dt, {2, 2, 5, 8}));
         in(c, rnd(r, dt, {2, 2, 5, 6}));
         in(c, rnd(r, dt, {3, 5}, 0.5));
         c.nb.output(dt, {2, 4, 3, 6}).attr_int("is_causal", 1).attr_int("past_length", 2);
         c.nb.attr_float("softcap", 1.5);
       }},
      {"Attention_bool_mask_probabilities",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {1, 2, 4, 4}, 2.0));
         in(c, rnd(r, dt, {1, 2, 4, 4}, 2.0));
         in(c, rnd(r, dt, {1, 2, 4, 3}));
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {1, 1, 4, 4}, {1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0}));
         c.nb.output(dt, {1, 2, 4, 3}).output(dt, {1, 2, 4, 4}).attr_int("qk_output", 3);
         c.nb.attr_float("scale", 0.3);
       }},
      {"Attention_nonpad_causal_window",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {2, 2, 2, 8}));
         in(c, rnd(r, dt, {2, 1, 6, 8}));
         in(c, rnd(r, dt, {2, 1, 6, 4}));
         in(c, rnd(r, dt, {2, 1, 1, 6}, 0.5));
         in(c, Tensor::of(I64, {2}, {4, 6}));
         c.nb.output(dt, {2, 2, 2, 4}).output(dt, {2, 2, 2, 6}).attr_int("is_causal", 1);
         c.nb.attr_int("left_window", 2).attr_int("qk_output", 2);
       }},
      // Attention's other paths: multi-query (one KV head for three query
      // heads), a rank-3 per-head mask shorter than the keys (the keys past
      // it masked), a right window, the softcapped scores as qk_output 0
      // and the softmax in f64; i32 nonpad_kv_seqlen with a bool mask
      // with one fully masked row, the causal frontier offset by
      // nonpad_kv_seqlen - S per batch (past_length is ignored then), and
      // the raw scores (qk_output 1).
      {"Attention_mqa_short_mask_right_window_f64",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {1, 3, 4, 8}));
         in(c, rnd(r, dt, {1, 1, 7, 8}));
         in(c, rnd(r, dt, {1, 1, 7, 5}));
         in(c, rnd(r, dt, {3, 1, 5}, 0.5));
         c.nb.output(dt, {1, 3, 4, 5}).output(dt, {1, 3, 4, 7}).attr_int("qk_output", 0);
         c.nb.attr_int("right_window", 1).attr_int("softmax_f64", 1).attr_float("softcap", 2.0);
       }},
      {"Attention_nonpad_i32_bool_mask_past",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {2, 2, 3, 4}));
         in(c, rnd(r, dt, {2, 2, 5, 4}));
         in(c, rnd(r, dt, {2, 2, 5, 3}));
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {2, 1, 3, 5},
                          {1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1,
                           1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {2}, {5, 3}));
         c.nb.output(dt, {2, 2, 3, 3}).output(dt, {2, 2, 3, 5}).attr_int("qk_output", 1);
         c.nb.attr_int("past_length", 2).attr_int("is_causal", 1);
        }},
      // More than 2,048 keys (Vulkan's attention.comp recomputes the scores
      // instead of keeping them in shared memory) with both windows around
      // a KV cache's offset, a per-head float mask and the raw scores out;
      // i32 nonpad_kv_seqlen with an empty batch (its rows 0), a 2-D mask
      // and the softcapped scores out.
      {"Attention_long_keys_windows_head_mask",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {1, 2, 2, 8}));
         in(c, rnd(r, dt, {1, 1, 2100, 8}));
         in(c, rnd(r, dt, {1, 1, 2100, 4}));
         in(c, rnd(r, dt, {2, 1, 2100}, 0.5));
         c.nb.output(dt, {1, 2, 2, 4}).output(dt, {1, 2, 2, 2100}).attr_int("qk_output", 0);
         c.nb.attr_int("past_length", 2090).attr_int("left_window", 1500).attr_int(
             "right_window", 3);
       }},
      {"Attention_i32_nonpad_empty_batch_softcap",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {2, 2, 3, 4}, 2.0));
         in(c, rnd(r, dt, {2, 2, 5, 4}, 2.0));
         in(c, rnd(r, dt, {2, 2, 5, 3}));
         in(c, rnd(r, dt, {3, 5}, 0.5));
         in(c, Tensor::of(AMPX_DTYPE_I32, {2}, {0, 4}));
         c.nb.output(dt, {2, 2, 3, 3}).output(dt, {2, 2, 3, 5}).attr_int("qk_output", 1);
         c.nb.attr_float("softcap", 2.0).attr_float("scale", 0.7);
       }},
      // A float mask shorter than the keys (the rest masked) broadcast over
      // the heads, i32 nonpad_kv_seqlen, a right window, the softmax in
      // double and the raw scores out; no mask at all with the scaled and
      // softcapped scores out.
      {"Attention_short_mask_i32_lengths_f64_softmax",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {2, 2, 3, 4}));
         in(c, rnd(r, dt, {2, 2, 5, 4}));
         in(c, rnd(r, dt, {2, 2, 5, 3}));
         in(c, rnd(r, dt, {2, 1, 3, 4}, 0.5));
         in(c, Tensor::of(AMPX_DTYPE_I32, {2}, {5, 3}));
         c.nb.output(dt, {2, 2, 3, 3}).output(dt, {2, 2, 3, 5}).attr_int("qk_output", 0);
         c.nb.attr_int("right_window", 1).attr_int("softmax_f64", 1);
       }},
      {"Attention_no_mask_scores",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Attention", "n");
         in(c, rnd(r, dt, {1, 3, 2, 6}, 2.0));
         in(c, rnd(r, dt, {1, 3, 7, 6}, 2.0));
         in(c, rnd(r, dt, {1, 3, 7, 5}));
         c.nb.output(dt, {1, 3, 2, 5}).output(dt, {1, 3, 2, 7}).attr_int("qk_output", 1);
         c.nb.attr_float("softcap", 4.0);
       }},
      // LinearAttention (ONNX's packed 3-D layout): each update rule, the
      // grouped-query read (Hq = 2 Hkv) and multi-query (Hkv = 1), decay
      // per key row and per head, beta per head and one for all, the
      // default and an explicit scale. Decays near 0 (|g| <= 0.3) keep the
      // state bounded over the few tokens.
      {"LinearAttention_gated_delta_gqa",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LinearAttention", "n");
         in(c, rnd(r, dt, {2, 5, 16}));
         in(c, rnd(r, dt, {2, 5, 8}, 0.5));
         in(c, rnd(r, dt, {2, 5, 6}));
         in(c, rnd(r, dt, {2, 2, 4, 3}, 0.3));
         in(c, rnd(r, dt, {2, 5, 8}, 0.3));
         in(c, rnd(r, dt, {2, 5, 2}));
         c.nb.output(dt, {2, 5, 12}).output(dt, {2, 2, 4, 3});
         c.nb.attr_int("q_num_heads", 4).attr_int("kv_num_heads", 2);
       }},
      {"LinearAttention_linear_scale",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LinearAttention", "n");
         in(c, rnd(r, dt, {1, 4, 8}));
         in(c, rnd(r, dt, {1, 4, 8}));
         in(c, rnd(r, dt, {1, 4, 10}));
         in(c, rnd(r, dt, {1, 2, 4, 5}));
         c.nb.output(dt, {1, 4, 10}).output(dt, {1, 2, 4, 5});
         c.nb.attr_int("q_num_heads", 2).attr_int("kv_num_heads", 2);
         c.nb.attr_str("update_rule", "linear").attr_float("scale", 0.5);
       }},
      {"LinearAttention_gated_head_decay",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LinearAttention", "n");
         in(c, rnd(r, dt, {2, 3, 12}));
         in(c, rnd(r, dt, {2, 3, 12}));
         in(c, rnd(r, dt, {2, 3, 6}));
         in(c, rnd(r, dt, {2, 3, 4, 2}));
         in(c, rnd(r, dt, {2, 3, 3}, 0.3));
         c.nb.output(dt, {2, 3, 6}).output(dt, {2, 3, 4, 2});
         c.nb.attr_int("q_num_heads", 3).attr_int("kv_num_heads", 3);
         c.nb.attr_str("update_rule", "gated");
       }},
      {"LinearAttention_delta_mqa_beta_scalar",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LinearAttention", "n");
         in(c, rnd(r, dt, {1, 6, 12}));
         in(c, rnd(r, dt, {1, 6, 4}, 0.5));
         in(c, rnd(r, dt, {1, 6, 5}));
         in(c, rnd(r, dt, {1, 1, 4, 5}, 0.3));
         in(c, rnd(r, dt, {1, 6, 1}));
         c.nb.output(dt, {1, 6, 15}).output(dt, {1, 1, 4, 5});
         c.nb.attr_int("q_num_heads", 3).attr_int("kv_num_heads", 1);
         c.nb.attr_str("update_rule", "delta");
       }},
      {"RotaryEmbedding_position_ids_interleaved_partial",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RotaryEmbedding", "n");
         in(c, rnd(r, dt, {2, 3, 4, 8}));
         in(c, rnd(r, dt, {10, 3}));
         in(c, rnd(r, dt, {10, 3}));
         in(c, Tensor::of(I64, {2, 4}, {0, 1, 2, 3, 9, 4, -1, 0}));
         c.nb.output(dt, {2, 3, 4, 8}).attr_int("interleaved", 1).attr_int(
             "rotary_embedding_dim", 6);
       }},
      {"RotaryEmbedding_3d_i32_positions_interleaved",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RotaryEmbedding", "n");
         in(c, rnd(r, dt, {2, 3, 16}));
         in(c, rnd(r, dt, {5, 2}));
         in(c, rnd(r, dt, {5, 2}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {2, 3}, {4, 0, -5, 2, 2, -1}));
         c.nb.output(dt, {2, 3, 16}).attr_int("num_heads", 2).attr_int("interleaved", 1);
         c.nb.attr_int("rotary_embedding_dim", 4);
       }},
      {"RotaryEmbedding_3d_halves",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RotaryEmbedding", "n");
         in(c, rnd(r, dt, {2, 3, 12}));
         in(c, rnd(r, dt, {2, 3, 3}));
         in(c, rnd(r, dt, {2, 3, 3}));
         c.nb.output(dt, {2, 3, 12}).attr_int("num_heads", 2);
       }},
      // The recurrent ops (T 4, N 3, I 5, H 6): a bidirectional LSTM with
      // sequence lengths (one 0, one T), peepholes and clip; a reverse GRU
      // without linear_before_reset; an RNN with a parameterised
      // activation. Weights scaled as exporters initialise them.
      {"LSTM_bidirectional_lens",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LSTM", "n");
         in(c, rnd(r, dt, {4, 3, 5}));
         in(c, rnd(r, dt, {2, 24, 5}, 0.4));
         in(c, rnd(r, dt, {2, 24, 6}, 0.4));
         in(c, rnd(r, dt, {2, 48}, 0.4));
         in(c, rnd(r, dt, {2, 3, 6}));
         in(c, rnd(r, dt, {2, 3, 6}));
         in(c, rnd(r, dt, {2, 18}, 0.4));
         in(c, Tensor::of(AMPX_DTYPE_I32, {3}, {4, 0, 2}));
         c.nb.output(dt, {4, 2, 3, 6}).output(dt, {2, 3, 6}).output(dt, {2, 3, 6});
         c.nb.attr_int("hidden_size", 6).attr_str("direction", "bidirectional").attr_float(
             "clip", 3.0);
       }},
      {"GRU_reverse_reset_before",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GRU", "n");
         in(c, rnd(r, dt, {4, 3, 5}));
         in(c, rnd(r, dt, {1, 18, 5}, 0.4));
         in(c, rnd(r, dt, {1, 18, 6}, 0.4));
         in(c, rnd(r, dt, {1, 36}, 0.4));
         in(c, rnd(r, dt, {1, 3, 6}));
         c.nb.output(dt, {4, 1, 3, 6}).output(dt, {1, 3, 6});
         c.nb.attr_int("hidden_size", 6).attr_str("direction", "reverse");
       }},
      {"RNN_leaky_relu",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RNN", "n");
         in(c, rnd(r, dt, {4, 3, 5}));
         in(c, rnd(r, dt, {1, 6, 5}, 0.4));
         in(c, rnd(r, dt, {1, 6, 6}, 0.4));
         in(c, rnd(r, dt, {1, 12}, 0.4));
         in(c, rnd(r, dt, {1, 3, 6}));
         c.nb.output(dt, {4, 1, 3, 6}).output(dt, {1, 3, 6});
         c.nb.attr_int("hidden_size", 6).attr_str("activations", "LeakyRelu").attr_floats(
             "activation_alpha", {0.1});
       }},
  };
    add_training_cases(m);
    add_recurrent_cases(m);
    rank_edges::add(m);
    return m;
  }();
  return all;
}

}  // namespace ampx::check::op_cases
