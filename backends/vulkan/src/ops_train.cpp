// The training ops (docs/OPS.md, "Training ops"): elementwise gradients
// (egrad.comp), SoftmaxGrad, SoftmaxCrossEntropy and its gradient (xent,
// xent_grad), the pool and convolution-weight gradients (pool_grad,
// conv_grad_w), BatchNormTraining/BatchNormGrad/LayerNormGrad (bn_train,
// bn_grad, ln_grad), SliceGrad, GatherGrad, DropoutTraining and the f32
// optimizer updates (sgd, adam). Every gradient is computed without scatter:
// one invocation per output element gathers what it receives, so no atomics
// are needed and the summation order is fixed.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ampx/opset/shape_rules.hpp"
#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

int64_t norm_axis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) n *= d[i];
  return n;
}

void require_f32(Variant var, std::string_view op) {
  if (var != Variant::kF32)
    throw Unsupported(std::string(op) + " is f32 only (the optimizer state is f32)");
}

void require_i64(const ampx_tensor_desc& t, const char* what) {
  if (t.dtype != AMPX_DTYPE_I64) throw Unsupported(std::string(what) + " must be i64");
}

}  // namespace

OpPlan plan_elementwise_grad(const NodeView& v, Variant var) {
  const std::string_view op = v.op_type();
  uint32_t code = 0;
  double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
  if (op == "ReluGrad")
    code = 0;
  else if (op == "SigmoidGrad")
    code = 1;
  else if (op == "TanhGrad")
    code = 2;
  else if (op == "GeluGrad")
    code = v.get_string("approximate", "none") == "tanh" ? 4 : 3;
  else if (op == "ClipGrad") {
    code = 5;
    lo = v.get_float("min", lo);
    hi = v.get_float("max", hi);
  } else {
    throw Unsupported("no elementwise gradient kernel for " + std::string(op));
  }
  const uint32_t es = elem_bytes(v.output(0).dtype);
  const int64_t n = numel(dims_of(v.output(0)));
  Dispatch d = linear_dispatch(sh("egrad", var), static_cast<uint64_t>(n));
  d.spec = {code};
  d.params = {i32(n), float_bits(lo), float_bits(hi)};
  d.tensors = {in_ref(0, es), in_ref(1, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_softmax_grad(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(1));
  const int64_t axis = norm_axis(v.get_int("axis", -1), x.size());
  const int64_t outer = product(x, 0, static_cast<size_t>(axis));
  const int64_t inner = product(x, static_cast<size_t>(axis) + 1, x.size());
  const int64_t L = x[static_cast<size_t>(axis)];
  const uint32_t es = elem_bytes(v.output(0).dtype);
  Dispatch d = linear_dispatch(sh("softmax_grad", var), static_cast<uint64_t>(outer * inner), 1);
  d.params = {i32(outer * inner), i32(L), i32(inner)};
  d.loop_iterations = 2 * loop_passes(strided_trips(L, 64));  // dot, then write
  d.tensors = {in_ref(0, es), in_ref(1, es), out_ref(0, es)};
  return {{d}};
}

// Two dispatches: log_prob row by row, then the loss in one workgroup.
OpPlan plan_softmax_cross_entropy(const NodeView& v, Variant var) {
  require_i64(v.input(1), "SoftmaxCrossEntropy labels");
  const auto x = dims_of(v.input(0));
  const uint32_t es = elem_bytes(v.output(0).dtype);
  i32(2 * x[0]);  // label words
  const std::vector<TensorRef> t = {in_ref(0, es), in_ref(1, 4), out_ref(0, es), out_ref(1, es)};
  Dispatch rows = linear_dispatch(sh("xent", var), static_cast<uint64_t>(x[0]), 1);
  rows.spec = {0};
  rows.params = {i32(x[0]), i32(x[1])};
  // Rows: max, exp-sum and write passes strided by 64. Loss: 64 invocations
  // share the batch, each recomputing its rows' log-sum-exp over C.
  rows.loop_iterations = 3 * loop_passes(strided_trips(x[1], 64));
  rows.tensors = t;
  Dispatch loss = linear_dispatch(sh("xent", var), 1, 1);
  loss.spec = {1};
  loss.params = rows.params;
  loss.loop_iterations = loop_passes(strided_trips(x[0], 64), 2 * loop_passes(x[1]));
  loss.tensors = t;
  return {{rows, loss}};
}

OpPlan plan_softmax_cross_entropy_grad(const NodeView& v, Variant var) {
  require_i64(v.input(2), "SoftmaxCrossEntropyGrad labels");
  const auto x = dims_of(v.input(1));
  const uint32_t es = elem_bytes(v.output(0).dtype);
  i32(2 * x[0]);
  Dispatch d = linear_dispatch(sh("xent_grad", var), static_cast<uint64_t>(numel(x)));
  d.params = {i32(x[0]), i32(x[1])};
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(2, 4), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_pool_grad(const NodeView& v, Variant var) {
  const bool is_max = v.op_type() == "MaxPoolGrad";
  const auto x = dims_of(is_max ? v.input(1) : v.output(0));
  const auto y = dims_of(v.input(0));
  const uint32_t es = elem_bytes(v.output(0).dtype);
  Dispatch d = linear_dispatch(sh("pool_grad", var), static_cast<uint64_t>(numel(x)));
  d.spec = {is_max ? 0u : 1u};
  d.params = pool_params(v, x, y, is_max);
  // The windows covering a cell (at most kH x kW of them), each rescanned
  // for its first maximum (MaxPoolGrad).
  const auto k = v.get_ints("kernel_shape");
  const uint64_t rescan = is_max ? loop_passes(k[0], loop_passes(k[1])) : 0;
  d.loop_iterations = loop_passes(k[0], loop_passes(k[1], rescan));
  d.tensors = {in_ref(0, es), in_ref(is_max ? 1 : 0, es), out_ref(0, es)};
  return {{d}};
}

// One invocation per weight element (conv_grad_w) on GPUs; on CPU drivers
// blocks of 4 output channels x 9 taps (conv_grad_w_cpu), as the GEMM and
// convolution kernel families are chosen (PlanTarget::blocked_gemm).
OpPlan plan_conv2d_grad_weight(const NodeView& v, Variant var, const PlanTarget& t) {
  const auto dy = dims_of(v.input(0)), x = dims_of(v.input(1)), w = dims_of(v.output(0));
  const auto st = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = v.get_ints("dilations", {1, 1});
  const int64_t group = v.get_int("group", 1);
  const uint32_t es = elem_bytes(v.output(0).dtype);
  i32(numel(x));
  i32(numel(dy));
  const int64_t mg = w[0] / group, taps = w[2] * w[3];
  Dispatch d =
      t.blocked_gemm
          ? linear_dispatch(sh("conv_grad_w_cpu", var),
                            static_cast<uint64_t>(group * ((mg + 3) / 4) * w[1] * ((taps + 8) / 9)),
                            32)
          : linear_dispatch(sh("conv_grad_w", var), static_cast<uint64_t>(numel(w)));
  d.params = {i32(x[0]),  i32(x[1]),    i32(x[2]),    i32(x[3]),   i32(w[0]),  i32(w[1]),
              i32(mg),    i32(w[2]),    i32(w[3]),    i32(dy[2]),  i32(dy[3]), i32(st[0]),
              i32(st[1]), i32(pads[0]), i32(pads[1]), i32(dil[0]), i32(dil[1])};
  // Both kernels reduce over N x OH x OW.
  d.loop_iterations = loop_passes(x[0], loop_passes(dy[2], loop_passes(dy[3])));
  d.tensors = {in_ref(0, es), in_ref(1, es), out_ref(0, es)};
  return {{d}};
}

// Y and the saved statistics, then the running statistics (ten tensors
// exceed a dispatch's eight bindings).
OpPlan plan_batchnorm_training(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  const int64_t inner = product(x, 2, x.size());
  const uint32_t es = elem_bytes(v.output(0).dtype);
  i32(numel(x));
  const std::vector<int32_t> params = {i32(x[0]), i32(x[1]), i32(inner),
                                       float_bits(v.get_float("epsilon", 1e-5)),
                                       float_bits(v.get_float("momentum", 0.9))};
  Dispatch y = linear_dispatch(sh("bn_train", var), static_cast<uint64_t>(x[1]), 1);
  y.spec = {0};
  // Mean, variance and write passes over the channel, strided by 64.
  y.loop_iterations = 3 * loop_passes(strided_trips(x[0] * inner, 64));
  y.params = params;
  y.tensors = {in_ref(0, es),  in_ref(1, es),  in_ref(2, es),
               out_ref(0, es), out_ref(3, es), out_ref(4, es)};
  Dispatch run = y;
  run.spec = {1};
  run.tensors = {in_ref(0, es),  in_ref(3, es),  in_ref(4, es),
                 out_ref(1, es), out_ref(1, es), out_ref(2, es)};
  return {{y, run}};
}

OpPlan plan_batchnorm_grad(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(1));
  const uint32_t es = elem_bytes(v.output(0).dtype);
  i32(numel(x));
  Dispatch d = linear_dispatch(sh("bn_grad", var), static_cast<uint64_t>(x[1]), 1);
  d.params = {i32(x[0]), i32(x[1]), i32(product(x, 2, x.size()))};
  d.loop_iterations = 2 * loop_passes(strided_trips(x[0] * product(x, 2, x.size()), 64));
  d.tensors = {in_ref(0, es), in_ref(1, es),  in_ref(2, es),  in_ref(3, es),
               in_ref(4, es), out_ref(0, es), out_ref(1, es), out_ref(2, es)};
  return {{d}};
}

// dX row by row, then dScale and dBias by blocks of 64 columns.
OpPlan plan_layernorm_grad(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(1));
  const auto axis = static_cast<size_t>(norm_axis(v.get_int("axis", -1), x.size()));
  const int64_t rows = product(x, 0, axis), L = product(x, axis, x.size());
  const uint32_t es = elem_bytes(v.output(0).dtype);
  i32(rows * L);
  const std::vector<int32_t> params = {i32(rows), i32(L), float_bits(v.get_float("epsilon", 1e-5))};
  Dispatch dx = linear_dispatch(sh("ln_grad", var), static_cast<uint64_t>(rows), 1);
  dx.spec = {0};
  dx.params = params;
  // dX: four passes over the row strided by 64; dScale/dBias: every row,
  // its statistics reduced again (two strided passes and a 64-wide tree).
  const uint64_t row = loop_passes(strided_trips(L, 64));
  dx.loop_iterations = 4 * row;
  dx.tensors = {in_ref(0, es), in_ref(1, es), in_ref(2, es), out_ref(0, es), out_ref(0, es)};
  Dispatch cols = linear_dispatch(sh("ln_grad", var), static_cast<uint64_t>((L + 63) / 64), 1);
  cols.spec = {1};
  cols.params = params;
  cols.loop_iterations = loop_passes(rows, 2 * row + 2 * loop_passes(6));
  cols.tensors = {in_ref(0, es), in_ref(1, es), in_ref(2, es), out_ref(1, es), out_ref(2, es)};
  return {{dx, cols}};
}

OpPlan plan_slice_grad(const NodeView& v, Variant var) {
  const auto x = dims_of(v.output(0)), y = dims_of(v.input(0));
  const auto starts = v.get_ints("starts"), ends = v.get_ints("ends");
  std::vector<int64_t> axes = v.get_ints("axes");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const auto steps = v.get_ints("steps", std::vector<int64_t>(starts.size(), 1));
  std::vector<int64_t> start(x.size(), 0), step(x.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<size_t>(norm_axis(axes[i], x.size()));
    start[a] = opset::slice_axis(starts[i], ends[i], steps[i], x[a]).start;
    // |step| may be huge when at most one element is taken.
    step[a] = y[a] > 1 ? steps[i] : 1;
  }
  const auto ys = strides_of(y);
  const int64_t n = numel(x);
  const uint32_t es = elem_bytes(v.output(0).dtype);
  Dispatch d = linear_dispatch(sh("slice_grad", var), static_cast<uint64_t>(n));
  d.params = {i32(n), static_cast<int32_t>(x.size())};
  for (size_t k = 0; k < x.size(); ++k)
    for (int64_t p : {x[k], start[k], step[k], y[k], ys[k]}) d.params.push_back(i32(p));
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_gather_grad(const NodeView& v, Variant var) {
  const auto data = dims_of(v.output(0));
  const ampx_tensor_desc& idx = v.input(1);
  if (idx.dtype != AMPX_DTYPE_I64 && idx.dtype != AMPX_DTYPE_I32)
    throw Unsupported("GatherGrad indices must be i32 or i64");
  const auto axis = static_cast<size_t>(norm_axis(v.get_int("axis", 0), data.size()));
  const int64_t k = numel(dims_of(idx));
  const int64_t n = numel(data);
  const uint32_t es = elem_bytes(v.output(0).dtype);
  i32(2 * k);
  Dispatch d = linear_dispatch(sh("gather_grad", var), static_cast<uint64_t>(n));
  d.params = {i32(n), i32(data[axis]), i32(product(data, axis + 1, data.size())), i32(k),
              idx.dtype == AMPX_DTYPE_I64 ? 1 : 0};
  d.loop_iterations = loop_passes(k);  // every index, for each dData element
  d.tensors = {in_ref(0, es), in_ref(1, 4), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_dropout_training(const NodeView& v, Variant var) {
  require_i64(v.input(1), "DropoutTraining seed");
  const int64_t n = numel(dims_of(v.input(0)));
  // The keep scale in f32 on the host, as cpu_ref computes it: a shader's
  // division need not be correctly rounded, and the masks must be identical.
  const auto ratio = static_cast<float>(v.get_float("ratio", 0.5));
  const float keep = 1.0f / (1.0f - ratio);
  const uint32_t es = elem_bytes(v.output(0).dtype);
  Dispatch d = linear_dispatch(sh("dropout_train", var), static_cast<uint64_t>(n));
  d.params = {i32(n), float_bits(ratio), float_bits(keep)};
  d.tensors = {in_ref(0, es), in_ref(1, 4), out_ref(0, es), out_ref(1, es)};
  return {{d}};
}

OpPlan plan_sgd_update(const NodeView& v, Variant var) {
  require_f32(var, v.op_type());
  const int64_t n = numel(dims_of(v.input(0)));
  const double momentum = v.get_float("momentum", 0.0);
  const bool has_m = momentum > 0.0;
  Dispatch d = linear_dispatch("sgd.f32", static_cast<uint64_t>(n));
  d.params = {i32(n), float_bits(momentum), v.get_int("nesterov", 0) != 0 ? 1 : 0,
              float_bits(v.get_float("weight_decay", 0.0)), has_m ? 1 : 0};
  d.tensors = {in_ref(0, 4),  in_ref(1, 4),
               in_ref(2, 4),  in_ref(has_m ? 3 : 0, 4),
               out_ref(0, 4), out_ref(has_m ? 1 : 0, 4)};
  return {{d}};
}

OpPlan plan_adam_update(const NodeView& v, Variant var) {
  require_f32(var, v.op_type());
  const int64_t n = numel(dims_of(v.input(0)));
  Dispatch d = linear_dispatch("adam.f32", static_cast<uint64_t>(n));
  d.params = {i32(n),
              float_bits(v.get_float("beta1", 0.9)),
              float_bits(v.get_float("beta2", 0.999)),
              float_bits(v.get_float("epsilon", 1e-8)),
              float_bits(v.get_float("weight_decay", 0.0)),
              v.get_int("decoupled", 0) != 0 ? 1 : 0};
  d.tensors = {in_ref(0, 4), in_ref(1, 4),  in_ref(2, 4),  in_ref(3, 4),
               in_ref(4, 4), out_ref(0, 4), out_ref(1, 4), out_ref(2, 4)};
  return {{d}};
}

// The reductions below (UpdateGuard, TensorStats) read every element once
// in pass 1, up to 7 tensors per dispatch (8 tensor bindings: the scratch
// buffer and 7 tensors), each cut into chunks of kReduceChunk elements with
// one workgroup per chunk, so a large tensor is read by many workgroups and
// many small ones cost one dispatch. Each workgroup writes its partial
// result to its slot of the node's scratch buffer; pass 2 combines the
// slots in slot order, so the result never depends on timing.
constexpr int64_t kReduceChunk = 256 * 32;
constexpr size_t kReducePer = 7;

// One pass-1 dispatch: tensors `inputs` (node inputs, non-empty) starting
// at scratch slot `first_slot`. Parameters: k, then the shader's `lead`
// values, the sizes, and the prefix sums of the workgroups; unused bindings
// repeat the first tensor. Returns the workgroups (slots) it covers.
int64_t reduce_pass1(OpPlan& plan, const NodeView& v, const std::string& shader,
                     const std::vector<uint32_t>& inputs, uint32_t elem, std::vector<int32_t> lead,
                     int64_t first_slot) {
  Dispatch d;
  d.shader = shader;
  d.linear = true;
  d.params = {static_cast<int32_t>(inputs.size())};
  d.params.insert(d.params.end(), lead.begin(), lead.end());
  d.params.push_back(i32(first_slot));
  std::vector<int32_t> sizes, prefix{0};
  for (uint32_t in : inputs) {
    const int64_t n = numel(dims_of(v.input(in)));
    sizes.push_back(i32(n));
    prefix.push_back(i32(prefix.back() + (n + kReduceChunk - 1) / kReduceChunk));
  }
  sizes.resize(kReducePer, 0);
  prefix.resize(kReducePer + 1, prefix.back());
  d.params.insert(d.params.end(), sizes.begin(), sizes.end());
  d.params.insert(d.params.end(), prefix.begin(), prefix.end());
  d.tensors = {scratch_ref()};
  for (size_t j = 0; j < kReducePer; ++j)
    d.tensors.push_back(in_ref(j < inputs.size() ? inputs[j] : inputs[0], elem));
  const int64_t groups = prefix[inputs.size()];
  d.groups = {static_cast<uint64_t>(groups), 1, 1};
  plan.dispatches.push_back(std::move(d));
  return groups;
}

// UpdateGuard: pass 1 (update_guard_partial) sums squares and flags
// non-finite values per chunk of the non-empty gradients; pass 2
// (update_guard) adds the slots and writes hyper' and the stats.
OpPlan plan_update_guard(const NodeView& v, Variant var) {
  require_f32(var, v.op_type());
  const int64_t hyper = numel(dims_of(v.input(0)));
  const auto clip = static_cast<float>(v.get_float("clip_norm", 0.0));
  const int32_t skip = v.get_int("skip_nonfinite", 1) != 0 ? 1 : 0;
  std::vector<uint32_t> grads;
  for (uint32_t i = 1; i < v.num_inputs(); ++i)
    if (numel(dims_of(v.input(i))) > 0) grads.push_back(i);  // no zero-sized binding
  OpPlan plan;
  int64_t slots = 0;
  for (size_t first = 0; first < grads.size(); first += kReducePer) {
    const std::vector<uint32_t> part(
        grads.begin() + static_cast<std::ptrdiff_t>(first),
        grads.begin() + static_cast<std::ptrdiff_t>(std::min(first + kReducePer, grads.size())));
    slots += reduce_pass1(plan, v, "update_guard_partial.f32", part, 4,
                          {static_cast<int32_t>(kReduceChunk)}, slots);
  }
  Dispatch d = linear_dispatch("update_guard.f32", 1, 1);
  d.params = {i32(slots), float_bits(clip), skip, i32(hyper)};
  d.loop_iterations = loop_passes(strided_trips(slots, 256)) + 2 * loop_passes(hyper);
  d.tensors = {out_ref(1, 4), in_ref(0, 4), out_ref(0, 4), scratch_ref()};
  plan.dispatches.push_back(std::move(d));
  plan.scratch_bytes = static_cast<uint64_t>(std::max<int64_t>(slots, 1)) * 2 * 4;
  return plan;
}

// TensorStats: pass 1 (tensor_stats_partial, in each input's own dtype:
// .f32, or .f16s for f16 storage widened exactly) counts per chunk, over
// runs of consecutive inputs of one dtype; pass 2 (tensor_stats_final)
// writes each input's row of the stats from its slots.
OpPlan plan_tensor_stats(const NodeView& v, const PlanTarget& t) {
  OpPlan plan;
  const auto tiny = static_cast<float>(v.get_float("tiny", 0x1p-14));
  std::vector<int32_t> rows{static_cast<int32_t>(v.num_inputs())};
  int64_t slots = 0;
  for (uint32_t i = 0; i < v.num_inputs();) {
    const ampx_dtype dt = v.input(i).dtype;
    const Variant var = variant_for(dt, t);  // bf16 and others: Unsupported
    std::vector<uint32_t> part;
    const int64_t first_slot = slots;
    for (; i < v.num_inputs() && part.size() < kReducePer && v.input(i).dtype == dt; ++i) {
      const int64_t n = numel(dims_of(v.input(i)));
      if (n == 0) throw Unsupported("TensorStats of an empty tensor (no zero-sized binding)");
      const int64_t chunks = (n + kReduceChunk - 1) / kReduceChunk;
      rows.insert(rows.end(), {i32(slots), i32(chunks), i32(n)});
      slots += chunks;
      part.push_back(i);
    }
    reduce_pass1(
        plan, v, var == Variant::kF32 ? "tensor_stats_partial.f32" : "tensor_stats_partial.f16s",
        part, elem_bytes(dt), {float_bits(tiny), static_cast<int32_t>(kReduceChunk)}, first_slot);
  }
  Dispatch d = linear_dispatch("tensor_stats_final.f32", v.num_inputs(), 1);
  int64_t most = 0;  // the most slots one input has
  for (size_t r = 0; r + 3 < rows.size(); r += 3) most = std::max<int64_t>(most, rows[r + 2]);
  d.loop_iterations = loop_passes(strided_trips(most, 256));
  d.params = std::move(rows);
  d.tensors = {out_ref(0, 4), scratch_ref()};
  plan.dispatches.push_back(std::move(d));
  plan.scratch_bytes = static_cast<uint64_t>(std::max<int64_t>(slots, 1)) * 4 * 4;
  plan.variant = Variant::kF32;
  return plan;
}

}  // namespace ampx::vulkan
