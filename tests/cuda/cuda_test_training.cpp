// The training ops on cuda:0 beyond the catalogue's small cases
// (cuda_test_ops.cpp runs those): shapes large enough for full 1024-thread
// block reductions and many windows per cell, the cuDNN weight gradient,
// determinism (a second run is bit for bit the first: docs/OPS.md), the
// optimizer updates in place and with apply = 0, and a bad label as a
// status with the node. Without a GPU every test skips with the plugin's
// reason.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "cuda_harness.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

// The dtypes this GPU computes in (bf16 from sm_80).
std::vector<ampx_dtype> float_dtypes(const Plugin& p) {
  if (compute_capability(p) >= 80) return {F32, F16, BF16};
  return {F32, F16};
}

// `c` on cuda (must run it) and cpu_ref: every output within
// tolerance(dtype), and a second cuda run equal bit for bit.
void expect_matches_ref_and_repeats(const Plugin& dev, const Plugin& ref, Case& c,
                                    const std::string& what) {
  SCOPED_TRACE(what);
  const ampx_capability cap = dev.capability(c.nb);
  std::cout << "[ answer   ] " << what << ": " << support_name(cap.support) << " (" << cap.note
            << ")\n";
  ASSERT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
  const auto got = run_on(dev, c.nb, c.inputs);
  const auto want = run_on(ref, c.nb, c.inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    expect_close(got[i], want[i].values(), what + " output " + std::to_string(i));
  }
  const auto again = run_on(dev, c.nb, c.inputs);
  for (size_t i = 0; i < got.size(); ++i) expect_bits_equal(again[i], got[i]);
}

Tensor positive(ampx_dtype dt, int64_t n, double base) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = base + 0.03 * static_cast<double>(i % 17);
  return Tensor::of(dt, {n}, v);
}

Tensor labels(int64_t rows, int64_t classes) {
  std::vector<double> v(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    v[static_cast<size_t>(r)] = static_cast<double>((r * 37 + 11) % classes);
  return Tensor::of(I64, {rows}, v);
}

TEST(CudaTraining, LargeShapesMatchCpuRefAndRepeatBitwise) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda")), ref(plugin_path("cpu_ref"));
  for (ampx_dtype dt : float_dtypes(cuda)) {
    const std::string d = dtype_str(dt);
    Rng r(23);
    {  // 3200 values per channel: 1024-thread blocks, grid-stride inside
      Case c;
      c.nb = NodeBuilder("BatchNormTraining", "bn");
      in(c, rnd(r, dt, {8, 16, 20, 20}, 3.0));
      in(c, rnd(r, dt, {16}));
      in(c, rnd(r, dt, {16}));
      in(c, rnd(r, dt, {16}));
      in(c, positive(dt, 16, 0.5));
      c.nb.output(dt, {8, 16, 20, 20});
      for (int i = 0; i < 4; ++i) c.nb.output(dt, {16});
      c.nb.attr_float("momentum", 0.9).attr_float("epsilon", 1e-3);
      expect_matches_ref_and_repeats(cuda, ref, c, "BatchNormTraining " + d);
    }
    {
      Case c;
      c.nb = NodeBuilder("BatchNormGrad", "bn");
      in(c, rnd(r, dt, {8, 16, 20, 20}));
      in(c, rnd(r, dt, {8, 16, 20, 20}));
      in(c, rnd(r, dt, {16}));
      in(c, rnd(r, dt, {16}, 0.1));
      in(c, positive(dt, 16, 0.7));
      c.nb.output(dt, {8, 16, 20, 20}).output(dt, {16}).output(dt, {16});
      expect_matches_ref_and_repeats(cuda, ref, c, "BatchNormGrad " + d);
    }
    {  // 1000-wide rows; 300 rows for the column pass
      Case c;
      c.nb = NodeBuilder("LayerNormGrad", "ln");
      in(c, rnd(r, dt, {300, 1000}));
      in(c, rnd(r, dt, {300, 1000}));
      in(c, rnd(r, dt, {1000}));
      c.nb.output(dt, {300, 1000}).output(dt, {1000}).output(dt, {1000});
      expect_matches_ref_and_repeats(cuda, ref, c, "LayerNormGrad " + d);
    }
    {  // along axis 0: rows strided by `inner`
      Case c;
      c.nb = NodeBuilder("SoftmaxGrad", "sm");
      in(c, rnd(r, dt, {700, 9}));
      in(c, rnd(r, dt, {700, 9}));
      c.nb.output(dt, {700, 9}).attr_int("axis", 0);
      expect_matches_ref_and_repeats(cuda, ref, c, "SoftmaxGrad axis 0 " + d);
    }
    {
      Case c;
      c.nb = NodeBuilder("SoftmaxCrossEntropy", "loss");
      in(c, rnd(r, dt, {300, 1000}, 6.0));
      in(c, labels(300, 1000));
      c.nb.output(dt, {}).output(dt, {300, 1000});
      expect_matches_ref_and_repeats(cuda, ref, c, "SoftmaxCrossEntropy " + d);
    }
    {
      Case c;
      c.nb = NodeBuilder("SoftmaxCrossEntropyGrad", "dloss");
      in(c, Tensor::of(dt, {}, {1.5}));
      in(c, rnd(r, dt, {300, 1000}));
      in(c, labels(300, 1000));
      c.nb.output(dt, {300, 1000});
      expect_matches_ref_and_repeats(cuda, ref, c, "SoftmaxCrossEntropyGrad " + d);
    }
    {  // overlapping 3x3 windows, stride 2: up to 4 windows per cell
      Case c;
      c.nb = NodeBuilder("MaxPoolGrad", "pool");
      in(c, rnd(r, dt, {2, 8, 17, 17}));
      in(c, rnd(r, dt, {2, 8, 33, 33}));
      c.nb.output(dt, {2, 8, 33, 33})
          .attr_ints("kernel_shape", {3, 3})
          .attr_ints("strides", {2, 2})
          .attr_ints("pads", {1, 1, 1, 1});
      expect_matches_ref_and_repeats(cuda, ref, c, "MaxPoolGrad " + d);
    }
    {
      Case c;
      c.nb = NodeBuilder("AveragePoolGrad", "pool");
      in(c, rnd(r, dt, {2, 8, 17, 17}));
      c.nb.output(dt, {2, 8, 33, 33})
          .attr_ints("kernel_shape", {3, 3})
          .attr_ints("strides", {2, 2})
          .attr_ints("pads", {1, 1, 1, 1})
          .attr_ints("input_shape", {2, 8, 33, 33});
      expect_matches_ref_and_repeats(cuda, ref, c, "AveragePoolGrad " + d);
    }
  }
}

// Conv2dGradWeight with symmetric pads goes through cuDNN's backward-filter
// (deterministic algorithms only) when cuDNN is loaded; the same node on
// the direct kernel (cudnn=off) must agree with cpu_ref too.
TEST(CudaTraining, Conv2dGradWeightOnCudnnAndDirectKernel) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda")), direct(plugin_path("cuda"), "cudnn=off"),
      ref(plugin_path("cpu_ref"));
  const int cc = compute_capability(cuda);
  for (ampx_dtype dt : float_dtypes(cuda)) {
    const std::string d = dtype_str(dt);
    Rng r(29);
    Case plain;
    plain.nb = NodeBuilder("Conv2dGradWeight", "dw");
    in(plain, rnd(r, dt, {4, 32, 32, 32}));
    in(plain, rnd(r, dt, {4, 16, 32, 32}));
    plain.nb.output(dt, {32, 16, 3, 3})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("pads", {1, 1, 1, 1});
    Case grouped;  // group 4, stride 2, dilation 2, pads 2: OH = (30 + 4 - 4 - 1) / 2 + 1 = 15
    grouped.nb = NodeBuilder("Conv2dGradWeight", "dw");
    in(grouped, rnd(r, dt, {2, 8, 15, 15}));
    in(grouped, rnd(r, dt, {2, 12, 30, 30}));
    grouped.nb.output(dt, {8, 3, 3, 3})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("strides", {2, 2})
        .attr_ints("pads", {2, 2, 2, 2})
        .attr_ints("dilations", {2, 2})
        .attr_int("group", 4);
    for (Case* c : {&plain, &grouped}) {
      const ampx_capability cap = cuda.capability(c->nb);
      const bool via_cudnn = std::string(cap.note).find("cuDNN") != std::string::npos;
      if (via_cudnn && dt != F32 && cc >= 80) {
        EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
      }
      expect_matches_ref_and_repeats(cuda, ref, *c, "Conv2dGradWeight " + d);
      expect_matches_ref_and_repeats(direct, ref, *c, "Conv2dGradWeight cudnn=off " + d);
    }
  }
}

// Launches `nb` on cuda:0 with its inputs in device buffers; output k is
// written into the buffer of input alias[k] when alias[k] >= 0 (in place,
// as the executor runs the updates), else into a buffer of its own.
std::vector<Tensor> launch_aliased(const Plugin& p, NodeBuilder& nb,
                                   const std::vector<Tensor>& inputs,
                                   const std::vector<int>& alias) {
  const ampx_node_desc& d = nb.desc();
  std::vector<ampx_buffer*> bufs;
  const auto alloc = [&](size_t bytes) {
    ampx_buffer* b = nullptr;
    p.ok(p.api->buffer_alloc(p.plugin, 0, std::max<size_t>(bytes, 1), &b));
    bufs.push_back(b);
    return b;
  };
  std::vector<ampx_buffer_view> ins, outs;
  for (const Tensor& t : inputs) {
    ampx_buffer* b = alloc(t.bytes.size());
    p.ok(p.api->copy_to_device(b, 0, t.bytes.data(), t.bytes.size()));
    ins.push_back({sizeof(ampx_buffer_view), b, 0});
  }
  std::vector<Tensor> result;
  for (size_t k = 0; k < d.num_outputs; ++k) {
    const ampx_tensor_desc& o = d.outputs[k];
    result.push_back(Tensor::zeros(o.dtype, std::vector<int64_t>(o.dims, o.dims + o.rank)));
    outs.push_back(alias[k] >= 0 ? ins[static_cast<size_t>(alias[k])]
                                 : ampx_buffer_view{sizeof(ampx_buffer_view),
                                                    alloc(result.back().bytes.size()), 0});
  }
  ampx_kernel* kernel = nullptr;
  p.ok(p.api->kernel_prepare(p.plugin, 0, &d, &kernel));
  p.ok(p.api->kernel_launch(kernel, ins.data(), ins.size(), outs.data(), outs.size()));
  for (size_t k = 0; k < result.size(); ++k) {
    p.ok(p.api->copy_to_host(result[k].bytes.data(), outs[k].buffer, 0, result[k].bytes.size()));
  }
  p.api->kernel_destroy(kernel);
  for (ampx_buffer* b : bufs) p.api->buffer_free(b);
  return result;
}

TEST(CudaTraining, UpdatesRunInPlaceAndApplyZeroIsABitwiseNoOp) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda")), ref(plugin_path("cpu_ref"));
  Rng r(31);
  const int64_t n = 4099;  // not a multiple of anything
  Case sgd;
  sgd.nb = NodeBuilder("SgdUpdate", "sgd");
  in(sgd, rnd(r, F32, {n}));
  in(sgd, rnd(r, F32, {n}));
  in(sgd, Tensor::of(F32, {3}, {0.1, 0.5, 1.0}));
  in(sgd, rnd(r, F32, {n}));
  sgd.nb.output(F32, {n}).output(F32, {n});
  sgd.nb.attr_float("momentum", 0.9).attr_int("nesterov", 1).attr_float("weight_decay", 0.01);
  Case plain_sgd;  // no momentum: W, G, hyper -> W'
  plain_sgd.nb = NodeBuilder("SgdUpdate", "sgd0");
  in(plain_sgd, rnd(r, F32, {n}));
  in(plain_sgd, rnd(r, F32, {n}));
  in(plain_sgd, Tensor::of(F32, {3}, {0.05, 2.0, 1.0}));
  plain_sgd.nb.output(F32, {n}).attr_float("weight_decay", 0.1);
  Case adam;
  adam.nb = NodeBuilder("AdamUpdate", "adam");
  for (int i = 0; i < 3; ++i) in(adam, rnd(r, F32, {n}));
  in(adam, positive(F32, n, 0.01));
  in(adam, Tensor::of(F32, {5}, {0.01, 0.5, 1.0, 0.271, 0.00299}));
  adam.nb.output(F32, {n}).output(F32, {n}).output(F32, {n});
  adam.nb.attr_float("weight_decay", 0.01);
  // Output k aliases state input alias[k]: W' -> W, M' -> M, V' -> V.
  const std::vector<std::pair<Case*, std::vector<int>>> all = {
      {&sgd, {0, 3}}, {&plain_sgd, {0}}, {&adam, {0, 2, 3}}};
  for (const auto& [c, alias] : all) {
    SCOPED_TRACE(c->nb.op_type());
    ASSERT_EQ(cuda.capability(c->nb).support, AMPX_SUPPORT_NATIVE);
    const auto want = run_on(ref, c->nb, c->inputs);
    const auto apart = run_on(cuda, c->nb, c->inputs);
    const auto in_place = launch_aliased(cuda, c->nb, c->inputs, alias);
    for (size_t k = 0; k < want.size(); ++k) {
      expect_close(apart[k], want[k].values(), "out of place");
      expect_bits_equal(in_place[k], apart[k]);
    }
    // apply = 0: every output is its input, bit for bit, apart or in place.
    std::vector<Tensor> skipped = c->inputs;
    const size_t h = c->nb.op_type() == "AdamUpdate" ? 4 : 2;
    std::vector<double> hyper = skipped[h].values();
    hyper[2] = 0.0;
    skipped[h] = Tensor::of(F32, skipped[h].dims, hyper);
    const auto kept = run_on(cuda, c->nb, skipped);
    const auto kept_in_place = launch_aliased(cuda, c->nb, skipped, alias);
    for (size_t k = 0; k < kept.size(); ++k) {
      const Tensor& state = skipped[static_cast<size_t>(alias[k])];
      expect_bits_equal(kept[k], state);
      expect_bits_equal(kept_in_place[k], state);
    }
  }
  // 16-bit updates: refused, with the op set's reason.
  NodeBuilder half("SgdUpdate", "sgd16");
  half.input(F16, {4}).input(F16, {4}).input(F16, {3}).output(F16, {4});
  const ampx_capability cap = cuda.capability(half);
  EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_STRNE(cap.note, "");
}

// UpdateGuard: 12 gradients, one spanning several of the 65,536-element
// blocks, one empty. Finite: within tolerance of cpu_ref, the finite flag
// and apply' exact, a second run bit for bit the first. A NaN or an inf in
// the first, a middle or the last gradient: stats = [0, inf], apply' = 0
// (skip_nonfinite = 1) or kept (0), the rest of hyper' unchanged: equal to
// cpu_ref's bit for bit.
TEST(CudaTraining, UpdateGuardFlagsNonFiniteGradientsExactly) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda")), ref(plugin_path("cpu_ref"));
  const auto make = [](int skip, float clip) {
    Rng r(41);
    Case c;
    c.nb = NodeBuilder("UpdateGuard", "guard");
    in(c, Tensor::of(F32, {3}, {0.01, 0.125, 1.0}));
    for (int i = 0; i < 12; ++i)
      in(c, rnd(r, F32, {i == 4 ? 3 * 65536 + 17 : i == 9 ? 0 : 5 + 40 * i}));
    c.nb.output(F32, {3}).output(F32, {2}).attr_float("clip_norm", clip);
    c.nb.attr_int("skip_nonfinite", skip);
    return c;
  };
  {
    Case c = make(1, 1.0f);
    expect_matches_ref_and_repeats(cuda, ref, c, "UpdateGuard finite");
    const auto got = run_on(cuda, c.nb, c.inputs);
    EXPECT_EQ(got[1].values()[0], 1.0);
    EXPECT_EQ(got[0].values()[2], 1.0);
  }
  for (int skip : {1, 0})
    for (size_t where : {size_t{1}, size_t{5}, size_t{12}})
      for (float bad : {NAN, INFINITY, -INFINITY}) {
        SCOPED_TRACE("skip " + std::to_string(skip) + " input " + std::to_string(where) +
                     " value " + std::to_string(bad));
        Case c = make(skip, 0.5f);
        c.inputs[where].set(where == 5 ? 3 * 65536 + 3 : 2, bad);
        ASSERT_EQ(cuda.capability(c.nb).support, AMPX_SUPPORT_NATIVE);
        const auto got = run_on(cuda, c.nb, c.inputs);
        const auto want = run_on(ref, c.nb, c.inputs);
        ASSERT_EQ(got.size(), 2u);
        expect_bits_equal(got[0], want[0]);
        expect_bits_equal(got[1], want[1]);
        EXPECT_EQ(got[1].values()[0], 0.0);
        EXPECT_EQ(got[1].values()[1], INFINITY);
        EXPECT_EQ(got[0].values()[1], 0.125);
        EXPECT_EQ(got[0].values()[2], skip ? 0.0 : 1.0);
      }
}

TEST(CudaTraining, ALabelOutOfRangeIsAStatusWithTheNode) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda"));
  Rng r(37);
  Case loss;
  loss.nb = NodeBuilder("SoftmaxCrossEntropy", "loss1");
  in(loss, rnd(r, F32, {4, 11}));
  in(loss, Tensor::of(I64, {4}, {0, 3, 11, 2}));
  loss.nb.output(F32, {}).output(F32, {4, 11});
  Case grad;
  grad.nb = NodeBuilder("SoftmaxCrossEntropyGrad", "dloss1");
  in(grad, Tensor::of(F32, {}, {1.0}));
  in(grad, rnd(r, F32, {4, 11}));
  in(grad, Tensor::of(I64, {4}, {0, -1, 1, 2}));
  grad.nb.output(F32, {4, 11});
  for (Case* c : {&loss, &grad}) {
    SCOPED_TRACE(c->nb.op_type());
    try {
      check::run_node(*cuda.api, cuda.plugin, 0, c->nb.desc(), c->inputs);
      ADD_FAILURE() << "a label out of range ran";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("node '" + c->nb.name() + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("label"), std::string::npos) << what;
    }
  }
  // The device runs the next node.
  Case relu;
  relu.nb = NodeBuilder("Relu", "r");
  in(relu, Tensor::of(F32, {3}, {-1.0, 0.5, 2.0}));
  relu.nb.output(F32, {3});
  EXPECT_EQ(run_on(cuda, relu.nb, relu.inputs)[0].values(), (std::vector<double>{0.0, 0.5, 2.0}));
}

}  // namespace
}  // namespace ampx::test
