// Why the gradient of S is summed over the ranks too. With R ranks, rank r
// holding x_r and loss L_r (the mean over its b rows), data parallelism
// trains L = (1/R) Σ_q L_q, the mean over all R·b rows. x_r reaches L_q for
// q ≠ r only through the summed statistics T = Σ_r S_r, so for a weight w
//   dL/dw = (1/R) Σ_q ∂L_q/∂w|direct + (1/R) Σ_r (Σ_q ∂L_q/∂T) · ∂S_r/∂w,
// where ∂L_q/∂T is what rank q's backward computes for S (its dS). If every
// rank replaces its dS by Σ_q dS_q before backpropagating it into x_r and w,
// rank r's weight gradient is G_r = ∂L_r/∂w|direct + (Σ_q dS_q) · ∂S_r/∂w, and
// the data-parallel average (1/R) Σ_r G_r is exactly dL/dw above. Without
// the sum, rank r would miss the other ranks' losses' dependence on its x_r.
#include <ampx/ir/shape_inference.hpp>
#include <ampx/train/sync_batch_norm.hpp>

#include <cstring>

namespace ampx::train {

SyncBatchNormValues compose_sync_batch_norm(SyncBatchNormSink& sink, const std::string& name,
                                            const SyncBatchNormOperands& in) {
  const TensorType xt = sink.type(in.x);
  if (xt.shape.size() < 2)
    throw GraphError("node '" + name + "' (BatchNorm): X must have rank >= 2 ([N, C, ...]), got " +
                     shape_str(xt.shape));
  if (xt.dtype != DType::kF32 && xt.dtype != DType::kF64)
    throw GraphError("node '" + name +
                     "' (BatchNorm): synchronized statistics need an f32 X, got " +
                     std::string(dtype_name(xt.dtype)));
  const DType dt = xt.dtype;
  const int64_t c = xt.shape[1];
  int64_t count = xt.shape[0];
  std::vector<int64_t> axes{0}, per_channel(xt.shape.size(), 1);
  per_channel[1] = c;
  for (size_t a = 2; a < xt.shape.size(); ++a) {
    axes.push_back(static_cast<int64_t>(a));
    count *= xt.shape[a];
  }
  const std::string p = name + "/sync/";
  using Part = SyncBatchNormPart;
  auto op = [&](OpType o, const std::string& what, std::vector<ValueId> ins, AttrMap attrs,
                Part part) {
    return sink.add(o, p + what, std::move(ins), std::move(attrs), part);
  };
  auto stat = [&](OpType o, const std::string& what, std::vector<ValueId> ins, AttrMap attrs = {}) {
    return op(o, what, std::move(ins), std::move(attrs), Part::kStatistics).at(0);
  };
  auto wide = [&](ValueId v, const std::string& what, Part part) {
    return op(OpType::kReshape, what, {v}, {{"shape", per_channel}}, part).at(0);
  };

  // The composition reads X once, through this f32 node: autodiff sums
  // the gradients of a value's readers in the precision of the value's
  // producer, and dX's terms cancel (dY minus its mean minus x̂ times
  // another), which a 16-bit producer (an O2 convolution) would round
  // away. BatchNormGrad computes dX in f32 too.
  const ValueId x = stat(OpType::kReshape, "input", {in.x}, {{"shape", xt.shape}});
  // This rank's sums, one value for the all-reduce.
  const AttrMap reduce{{"axes", axes}, {"keepdims", int64_t{0}}};
  const ValueId sum = stat(OpType::kReduceSum, "sum", {x}, reduce);
  const ValueId square = stat(OpType::kMul, "square", {x, x});
  const ValueId sum_sq = stat(OpType::kReduceSum, "sum_squares", {square}, reduce);
  // Exact in f32 up to 2^24 elements per channel over all ranks.
  const ValueId n = sink.constant(p + "count", dt, static_cast<double>(count));
  const ValueId stats = stat(OpType::kConcat, "stats", {sum, sum_sq, n}, {{"axis", int64_t{0}}});

  // Everything below reads the (summed) S only.
  const std::vector<ValueId> parts =
      op(OpType::kSplit, "split", {stats},
         {{"axis", int64_t{0}}, {"split", std::vector<int64_t>{c, c, 1}}}, Part::kStatistics);
  const ValueId mean = stat(OpType::kDiv, "mean", {parts[0], parts[2]});
  const ValueId mean_sq = stat(OpType::kDiv, "mean_of_squares", {parts[1], parts[2]});
  const ValueId var_raw = stat(OpType::kSub, "variance_raw",
                               {mean_sq, stat(OpType::kMul, "squared_mean", {mean, mean})});
  // E[x²] − mean² can round below 0 where the variance is far smaller
  // than mean²; a negative variance would make √(var + ε) NaN.
  const ValueId var = stat(OpType::kRelu, "variance", {var_raw});
  const ValueId eps = sink.constant(p + "epsilon", dt, in.epsilon);
  const ValueId std_dev =
      stat(OpType::kSqrt, "std", {stat(OpType::kAdd, "variance_eps", {var, eps})});
  const ValueId invstd = stat(OpType::kReciprocal, "invstd", {std_dev});
  const ValueId gain = stat(OpType::kMul, "scale_invstd", {in.scale, invstd});

  const ValueId centred =
      op(OpType::kSub, "centred", {x, wide(mean, "mean_wide", Part::kStatistics)}, {},
         Part::kNormalization)
          .at(0);
  const ValueId scaled =
      op(OpType::kMul, "scaled", {centred, wide(gain, "gain_wide", Part::kStatistics)}, {},
         Part::kNormalization)
          .at(0);
  SyncBatchNormValues out;
  out.stats = stats;
  out.y = sink.add(OpType::kAdd, name, {scaled, wide(in.bias, "bias_wide", Part::kNormalization)},
                   {}, Part::kNormalization)
              .at(0);

  // running′ = momentum · running + (1 − momentum) · batch, the constants
  // rounded as BatchNormTraining's kernel rounds them.
  const double keep = dt == DType::kF32
                          ? static_cast<double>(static_cast<float>(kBatchNormMomentum))
                          : kBatchNormMomentum;
  const double take =
      dt == DType::kF32 ? static_cast<double>(1.0f - static_cast<float>(keep)) : 1.0 - keep;
  const ValueId keep_v = sink.constant(p + "momentum", dt, keep);
  const ValueId take_v = sink.constant(p + "one_minus_momentum", dt, take);
  auto running = [&](ValueId old, ValueId batch, const std::string& what) {
    return stat(OpType::kAdd, what,
                {stat(OpType::kMul, what + "/kept", {old, keep_v}),
                 stat(OpType::kMul, what + "/batch", {batch, take_v})});
  };
  out.running_mean = running(in.running_mean, mean, "running_mean");
  out.running_var = running(in.running_var, var, "running_var");
  return out;
}

namespace {

// The composition's nodes in a training step: typed by shape inference,
// marked as BatchNorm for the planner, the statistics f32 at every level.
class GraphSink final : public SyncBatchNormSink {
 public:
  explicit GraphSink(Graph& g) : g_(g) {}
  TensorType type(ValueId v) const override { return g_.value(v).type; }
  std::vector<ValueId> add(OpType op, const std::string& name, std::vector<ValueId> inputs,
                           AttrMap attrs, SyncBatchNormPart part) override {
    std::vector<TensorType> in_types;
    for (ValueId v : inputs) in_types.push_back(type(v));
    auto out_types = infer_output_types(op, in_types, attrs, name);
    const NodeId id =
        g_.add_node(name, op, std::move(inputs), std::move(out_types), std::move(attrs));
    Node& n = g_.node(id);
    n.origin = std::string(kSyncBatchNormOrigin);
    n.keep_f32 = part == SyncBatchNormPart::kStatistics;
    added.push_back(id);
    return n.outputs;
  }
  ValueId constant(const std::string& name, DType dtype, double value) override {
    std::vector<std::byte> bytes(dtype_size(dtype));
    if (dtype == DType::kF64) {
      std::memcpy(bytes.data(), &value, sizeof value);
    } else {
      const auto f = static_cast<float>(value);
      std::memcpy(bytes.data(), &f, sizeof f);
    }
    return g_.add_constant(name, {dtype, {1}}, std::move(bytes));
  }
  std::vector<NodeId> added;

 private:
  Graph& g_;
};

}  // namespace

GraphSyncBatchNorm append_sync_batch_norm(Graph& g, const std::string& name,
                                          const SyncBatchNormOperands& in) {
  GraphSink sink(g);
  GraphSyncBatchNorm r;
  r.values = compose_sync_batch_norm(sink, name, in);
  const NodeId y_node = g.value(r.values.y).producer;
  const std::array<ValueId, 3> operands{in.x, in.scale, in.bias};
  for (NodeId id : sink.added) {
    if (id != y_node) r.inner_nodes.push_back(id);
    for (size_t k = 0; k < operands.size(); ++k)
      if (r.operand_readers[k] == kNone && g.node(id).inputs.at(0) == operands[k])
        r.operand_readers[k] = id;
  }
  return r;
}

ValueId sync_stats_gradient(const Graph& g, ValueId stats) {
  // Concat's rule splits the gradient of its output: the Split's input is
  // the total gradient of S, after autodiff summed every contribution.
  const std::string& producer = g.node(g.value(stats).producer).name;
  for (const Node& n : g.nodes())
    if (n.grad_of == producer && n.op == OpType::kSplit) return n.inputs.at(0);
  return kNone;
}

}  // namespace ampx::train
