#include "ampx/opset/recurrent.hpp"

#include <sstream>

namespace ampx::opset {
namespace {

using Fn = RecurrentActivation::Fn;

struct FnInfo {
  const char* name;
  Fn fn;
  bool alpha, beta;      // takes them from activation_alpha / activation_beta
  double alpha0, beta0;  // ONNX Runtime's defaults when the lists run out
};

constexpr FnInfo kFns[] = {
    {"Sigmoid", Fn::kSigmoid, false, false, 0, 0},
    {"Tanh", Fn::kTanh, false, false, 0, 0},
    {"Relu", Fn::kRelu, false, false, 0, 0},
    {"Affine", Fn::kAffine, true, true, 1, 0},
    {"LeakyRelu", Fn::kLeakyRelu, true, false, 0.01, 0},
    {"ThresholdedRelu", Fn::kThresholdedRelu, true, false, 1, 0},
    {"ScaledTanh", Fn::kScaledTanh, true, true, 1, 1},
    {"HardSigmoid", Fn::kHardSigmoid, true, true, 0.2, 0.5},
    {"Elu", Fn::kElu, true, false, 1, 0},
    {"Softsign", Fn::kSoftsign, false, false, 0, 0},
    {"Softplus", Fn::kSoftplus, false, false, 0, 0},
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

}  // namespace

RecurrentSpec recurrent_spec(const plugin_support::NodeView& v) {
  RecurrentSpec s;
  const std::string op(v.op_type());
  if (op == "LSTM") {
    s.kind = RecurrentKind::kLstm, s.gates = 4, s.functions = 3;
  } else if (op == "GRU") {
    s.kind = RecurrentKind::kGru, s.gates = 3, s.functions = 2;
  } else if (op == "RNN") {
    s.kind = RecurrentKind::kRnn, s.gates = 1, s.functions = 1;
  } else {
    v.fail("not a recurrent op");
  }
  s.hidden = v.get_int("hidden_size", 0);
  if (s.hidden < 1) v.fail("attribute 'hidden_size' must be >= 1, got " + std::to_string(s.hidden));
  const std::string dir = v.get_string("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    v.fail("attribute 'direction' must be forward, reverse or bidirectional, got '" + dir + "'");
  s.directions = dir == "bidirectional" ? 2 : 1;
  s.reverse = dir == "reverse";
  s.clip = v.get_float("clip", 0.0);
  if (!(s.clip >= 0) || !std::isfinite(s.clip))
    v.fail("attribute 'clip' must be a finite value >= 0 (0: none)");
  const int64_t forget = v.get_int("input_forget", 0);
  const int64_t lbr = v.get_int("linear_before_reset", 0);
  if (forget != 0 && forget != 1) v.fail("attribute 'input_forget' must be 0 or 1");
  if (lbr != 0 && lbr != 1) v.fail("attribute 'linear_before_reset' must be 0 or 1");
  if (forget && s.kind != RecurrentKind::kLstm) v.fail("'input_forget' is LSTM's attribute");
  if (lbr && s.kind != RecurrentKind::kGru) v.fail("'linear_before_reset' is GRU's attribute");
  s.input_forget = forget != 0;
  s.linear_before_reset = lbr != 0;

  std::vector<std::string> names = split_commas(v.get_string("activations", ""));
  if (names.empty()) {
    if (s.kind == RecurrentKind::kLstm) names = {"Sigmoid", "Tanh", "Tanh"};
    if (s.kind == RecurrentKind::kGru) names = {"Sigmoid", "Tanh"};
    if (s.kind == RecurrentKind::kRnn) names = {"Tanh"};
  }
  const auto per = static_cast<size_t>(s.functions);
  // One direction's list for a bidirectional node serves both (ONNX
  // Runtime does the same).
  if (names.size() == per && s.directions == 2) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  if (names.size() != per * static_cast<size_t>(s.directions))
    v.fail("attribute 'activations' has " + std::to_string(names.size()) + " functions, expected " +
           std::to_string(per * static_cast<size_t>(s.directions)));
  const std::vector<double> alphas = v.get_floats("activation_alpha");
  const std::vector<double> betas = v.get_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const std::string& name : names) {
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFns)
      if (name == f.name) info = &f;
    if (!info) v.fail("activation '" + name + "' is not one of ONNX's recurrent activations");
    RecurrentActivation a{info->fn, info->alpha0, info->beta0};
    // Consumed in order by the functions that take them.
    if (info->alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (info->beta && bi < betas.size()) a.beta = betas[bi++];
    s.activations.push_back(a);
  }
  return s;
}

}  // namespace ampx::opset
