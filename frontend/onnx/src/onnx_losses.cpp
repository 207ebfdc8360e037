// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (opset 12+),
// imported as op-set ops (docs/ONNX.md):
//   log_prob = LogSoftmax(scores, axis 1)            (SoftmaxCrossEntropyLoss)
//   picked   = GatherElements(log_prob, labels as [N, 1, d...], axis 1)
//   loss     = -picked · w,  w = weight[label] (1 without weights), 0 where
//              the label is ignore_index
//   none: loss;  sum: ReduceSum(loss);  mean: ReduceSum(loss) / ReduceSum(w)
// which is ONNX's definition, also for the weighted mean. The loss reductions
// are black-listed ops (ReduceSum, LogSoftmax), so O2 keeps them in f32 as
// the training issue's SoftmaxCrossEntropy.
#include <fmt/format.h>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

ValueId reshape(Importer& im, ValueId v, std::vector<int64_t> shape) {
  return im.emit1("Reshape", {v}, {{"shape", std::move(shape)}});
}

ValueId sum_all(Importer& im, ValueId v) {
  std::vector<int64_t> axes(im.type(v).shape.size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  return im.emit1("ReduceSum", {v}, {{"axes", axes}, {"keepdims", int64_t{0}}});
}

// The loss from log-probabilities [N, C, d...] and labels [N, d...].
ValueId nll(Importer& im, const onnx::NodeProto& n, ValueId log_prob, ValueId labels,
            std::optional<ValueId> weight) {
  const Shape ps = im.type(log_prob).shape, ls = im.type(labels).shape;
  const DType fdt = im.type(log_prob).dtype;
  const DType ldt = im.type(labels).dtype;
  if (ldt != DType::kI64 && ldt != DType::kI32)
    im.fail(fmt::format("labels are {}, expected i64 or i32", dtype_name(ldt)));
  if (ps.size() < 2) im.fail(fmt::format("the scores must be [N, C, ...], got rank {}", ps.size()));
  Shape want{ps[0]};
  want.insert(want.end(), ps.begin() + 2, ps.end());
  if (ls != want)
    im.fail(fmt::format("labels have shape {}, expected {} for scores {}", shape_str(ls),
                        shape_str(want), shape_str(ps)));
  const std::vector<int64_t> label_dims(ls.begin(), ls.end());
  std::optional<ValueId> keep;  // bool: the label is not ignore_index
  ValueId safe = labels;        // ignored labels replaced by 0, a valid class
  if (const auto ignore = im.attr_int(n, "ignore_index")) {
    const ValueId ig = im.emit1("Cast", {im.constant_i64(std::vector<int64_t>{*ignore}, {1})},
                                {{"to", int64_t(to_c(ldt))}});
    keep = im.emit1("Not", {im.emit1("Equal", {labels, ig})});
    const ValueId zero = im.emit1("Cast", {im.constant_i64(std::vector<int64_t>{0}, {1})},
                                  {{"to", int64_t(to_c(ldt))}});
    safe = im.emit1("Where", {*keep, labels, zero});
  }
  std::vector<int64_t> idx_dims = label_dims;
  idx_dims.insert(idx_dims.begin() + 1, 1);
  const ValueId picked =
      im.emit1("GatherElements", {log_prob, reshape(im, safe, idx_dims)}, {{"axis", int64_t{1}}});
  ValueId loss = im.emit1("Neg", {reshape(im, picked, label_dims)});
  std::optional<ValueId> w;
  if (weight) {
    if (im.type(*weight).shape != Shape{ps[1]})
      im.fail(fmt::format("weights must have shape [{}]", ps[1]));
    w = im.emit1("Gather", {*weight, safe}, {{"axis", int64_t{0}}});
  }
  if (keep) {
    const ValueId k = im.emit1("Cast", {*keep}, {{"to", int64_t(to_c(fdt))}});
    w = w ? im.emit1("Mul", {*w, k}) : k;
  }
  if (w) loss = im.emit1("Mul", {loss, *w});
  const std::string reduction = im.attr_string_or(n, "reduction", "mean");
  if (reduction == "none") return loss;
  if (reduction == "sum") return sum_all(im, loss);
  if (reduction != "mean")
    im.fail(fmt::format("attribute 'reduction' must be none, sum or mean, got '{}'", reduction));
  if (w) return im.emit1("Div", {sum_all(im, loss), sum_all(im, *w)});
  std::vector<int64_t> axes(label_dims.size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  return im.emit1("ReduceMean", {loss}, {{"axes", axes}, {"keepdims", int64_t{0}}});
}

std::optional<ValueId> optional_input(Importer& im, const onnx::NodeProto& n, int i) {
  if (!im.has_input(n, i)) return std::nullopt;
  return im.input(n, i);
}

}  // namespace

void softmax_cross_entropy_loss(Importer& im, const onnx::NodeProto& n) {
  const ValueId scores = im.input(n, 0);
  im.set_origin("SoftmaxCrossEntropyLoss");
  const ValueId log_prob = im.emit1("LogSoftmax", {scores}, {{"axis", int64_t{1}}});
  im.bind(n, 0, nll(im, n, log_prob, im.input(n, 1), optional_input(im, n, 2)));
  if (n.output_size() > 1 && !n.output(1).empty()) im.bind(n, 1, log_prob);
}

void negative_log_likelihood_loss(Importer& im, const onnx::NodeProto& n) {
  im.set_origin("NegativeLogLikelihoodLoss");
  im.bind(n, 0, nll(im, n, im.input(n, 0), im.input(n, 1), optional_input(im, n, 2)));
}

}  // namespace ampx::onnx_io
