// The ops ampx imports from ONNX's domains other than the default one
// (docs/ONNX.md, "Other domains"): ai.onnx.ml (scikit-learn's converters'
// ops), ai.onnx.preview (FlexAttention, onnx_attention.cpp) and
// ai.onnx.preview.training (the optimizers' update formulas).
// Each is a composition of op-set ops, like the default domain's composed
// ops; `since`/`until` are the domain's own versions.
#include <map>
#include <string>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

constexpr std::string_view kMl = "ai.onnx.ml";
constexpr std::string_view kTraining = "ai.onnx.preview.training";
constexpr std::string_view kPreview = "ai.onnx.preview";

// domain -> op type -> converter.
const std::map<std::string_view, std::map<std::string_view, OpConverter>>& table() {
  static const std::map<std::string_view, std::map<std::string_view, OpConverter>> t{
      {kMl,
       {
           {"Binarizer", {{"Greater", "Cast"}, binarizer}},
           {"ArrayFeatureExtractor", {{"Gather", "Reshape"}, array_feature_extractor}},
           {"LabelEncoder",
            {{"Reshape", "Equal", "Cast", "ArgMax", "ReduceMax", "Gather", "Where"},
             label_encoder,
             2}},
           {"TreeEnsemble",
            {{"Gather", "GatherElements", "LessOrEqual", "Less", "GreaterOrEqual", "Greater",
              "Equal", "Not", "Or", "And", "Where", "Reshape", "Cast", "ReduceMax", "ReduceMin",
              "ReduceSum", "Sub", "Softmax", "Sigmoid"},
             tree_ensemble,
             5}},
           {"TreeEnsembleRegressor",
            {{"Gather",
              "GatherElements",
              "LessOrEqual",
              "Less",
              "GreaterOrEqual",
              "Greater",
              "Equal",
              "Not",
              "Or",
              "And",
              "Where",
              "Reshape",
              "Cast",
              "ReduceMax",
              "ReduceMin",
              "ReduceSum",
              "Sub",
              "Add",
              "Softmax",
              "Sigmoid"},
             tree_ensemble_regressor,
             1,
             5}},  // deprecated in ml 5 (TreeEnsemble)
       }},
      {kPreview,
       {
           {"FlexAttention",
            {{"Attention", "Mul", "Transpose", "Reshape", "MatMul", "Cast", "Softmax"},
             flex_attention}},
       }},
      {kTraining,
       {
           {"Adagrad", {{"Cast", "Mul", "Add", "Div", "Sqrt", "Sub"}, adagrad}},
           {"Adam",
            {{"Cast", "Mul", "Add", "Div", "Sqrt", "Sub", "Pow", "Greater", "Where"}, adam}},
           {"Momentum", {{"Cast", "Mul", "Add", "Sub", "Greater", "Where"}, momentum}},
       }},
  };
  return t;
}

}  // namespace

const OpConverter* find_domain_converter(std::string_view domain, std::string_view op_type) {
  const auto d = table().find(domain);
  if (d == table().end()) return nullptr;
  const auto it = d->second.find(op_type);
  return it == d->second.end() ? nullptr : &it->second;
}

// The newest versions onnx 1.23 defines (ONNX Runtime 1.32 loads the same).
int64_t newest_domain_opset(std::string_view domain) {
  if (domain == kMl) return 5;
  if (domain == kTraining) return 1;
  if (domain == kPreview) return 1;
  return 0;
}

}  // namespace ampx::onnx_io
