#include <ampx/amp/policy.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace ampx {

std::string_view amp_level_name(AmpLevel level) {
  switch (level) {
    case AmpLevel::kO0:
      return "O0";
    case AmpLevel::kO1:
      return "O1";
    case AmpLevel::kO2:
      return "O2";
    case AmpLevel::kO3:
      return "O3";
    case AmpLevel::kAuto:
      return "auto";
  }
  return "?";
}

AmpLevel parse_amp_level(std::string_view text) {
  for (AmpLevel l : {AmpLevel::kO0, AmpLevel::kO1, AmpLevel::kO2, AmpLevel::kO3, AmpLevel::kAuto})
    if (text == amp_level_name(l)) return l;
  throw std::invalid_argument("unknown amp level '" + std::string(text) +
                              "' (expected O0, O1, O2, O3 or auto)");
}

bool NodeOverride::matches(std::string_view node_name) const {
  if (!pattern.empty() && pattern.back() == '*')
    return node_name.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1));
  return node_name == pattern;
}

void validate_override_pattern(std::string_view pattern, std::string_view flag) {
  const auto refuse = [&](std::string_view why) {
    throw std::invalid_argument(std::string(flag) + " '" + std::string(pattern) +
                                "': " + std::string(why));
  };
  const auto star = pattern.find('*');
  if (pattern.empty()) refuse("expected a node name or a name prefix ending in '*'");
  // A pattern for every node is a run-wide setting (--device, --amp), not
  // a per-node one.
  if (pattern == "*") refuse("'*' alone matches every node: give a name prefix before the '*'");
  if (star != std::string_view::npos && star != pattern.size() - 1)
    refuse("'*' may only end the pattern (a node name or a name prefix ending in '*')");
  if (pattern.find_first_of(" \t,") != std::string_view::npos)
    refuse("a node name pattern has no spaces or commas");
}

// MindSpore's O1 white list (docs/PLANNER.md): Conv2D(+Transpose), MatMul,
// Dense, PReLU and ReLU.
std::vector<OpType> default_white_list() {
  return {OpType::kConv2d, OpType::kMatMul,        OpType::kGemm,
          OpType::kRelu,   OpType::kConvTranspose, OpType::kPRelu};
}
std::vector<OpType> default_black_list() {
  // The training step's forms too: BatchNorm trains as BatchNormTraining,
  // and MindSpore's O2 casts the network's output to f32 before the loss.
  // RMSNorm is LayerNorm without the mean: kept with it.
  return {OpType::kBatchNorm, OpType::kLayerNorm, OpType::kBatchNormTraining,
          OpType::kSoftmaxCrossEntropy, OpType::kRMSNorm};
}

bool black_listed_origin(std::string_view onnx_op) {
  // "SyncBatchNorm": a training step's synchronized BatchNorm, composed of
  // ordinary ops (train/sync_batch_norm.hpp), black as BatchNormTraining.
  return onnx_op == "DFT" || onnx_op == "STFT" || onnx_op == "AffineGrid" ||
         onnx_op == "SyncBatchNorm";
}

std::vector<OpType> parse_op_list(std::string_view text, std::string_view flag) {
  std::vector<OpType> ops;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, comma - pos);
    if (!item.empty()) {
      auto op = parse_op(item);
      if (!op)
        throw std::invalid_argument(std::string(flag) + ": unknown op '" + std::string(item) + "'");
      ops.push_back(*op);
    }
    pos = comma + 1;
  }
  return ops;
}

namespace {
// Once per process, so that an op added to the catalogue without an AMP
// category shows up (a test lists such ops too).
void warn_ops_without_amp_category() {
  static const bool warned = [] {
    const std::vector<std::string_view> ops = opset::ops_without_amp_category();
    if (!ops.empty())
      spdlog::warn(
          "ops without an AMP category (opset/ops.inc), which the auto level lets follow "
          "their input: {}",
          fmt::join(ops, ", "));
    return true;
  }();
  (void)warned;
}
}  // namespace

PolicyStep::PolicyStep(const AmpPolicy& policy)
    : policy_(policy),
      custom_white_(policy.white_list.has_value()),
      custom_black_(policy.black_list.has_value()),
      override_used_(policy.overrides.size(), false) {
  for (const std::string& name : policy.overflow_fallback) fallback_.emplace(name, false);
  for (OpType op : custom_white_ ? *policy.white_list : default_white_list())
    white_[static_cast<size_t>(op)] = true;
  for (OpType op : custom_black_ ? *policy.black_list : default_black_list())
    black_[static_cast<size_t>(op)] = true;
  if (policy.level == AmpLevel::kAuto) warn_ops_without_amp_category();
}

PolicyStep::Intent PolicyStep::intend(const Graph& g, const Node& n,
                                      const std::function<DType(ValueId)>& home_dtype) {
  Intent r;
  // The optimizer updates hold the master weights: f32 whatever the level,
  // the lists or an override say (a 16-bit update would round it away);
  // so does their guard, which reads the same f32 gradients.
  if (is_master_weight_op(n.op)) {
    r.reason = IntentReason::kMasterWeights;
    return r;
  }
  const size_t op_index = static_cast<size_t>(n.op);
  if (!forward_names_collected_) {
    for (const Node& m : g.nodes())
      if (!m.grad_of.empty()) want16_by_node_.try_emplace(m.grad_of);
    forward_names_collected_ = true;
  }
  // A backward node intends what its forward node intends, as the backward
  // of a Cast-wrapped op does in MindSpore; only an override of its own
  // name, or a list naming its own op, decides otherwise.
  auto forward = n.grad_of.empty() ? want16_by_node_.end() : want16_by_node_.find(n.grad_of);
  if (forward != want16_by_node_.end() && !forward->second) forward = want16_by_node_.end();
  const bool listed = (custom_white_ && white_[op_index]) || (custom_black_ && black_[op_index]);
  const bool black_origin = !custom_black_ && black_listed_origin(n.origin);
  if (forward != want16_by_node_.end() && !listed) {
    r.want16 = *forward->second;
    r.reason = IntentReason::kFollowsForward;
  } else
    switch (policy_.level) {
      case AmpLevel::kO0:
        r.reason = IntentReason::kLevelO0;
        break;
      case AmpLevel::kO1:
        r.want16 = white_[op_index];
        r.reason = r.want16 ? IntentReason::kWhiteList : IntentReason::kNotWhiteListed;
        break;
      case AmpLevel::kO2:
        r.want16 = !black_[op_index] && !black_origin;
        r.reason = r.want16 ? IntentReason::kLevelDefault : IntentReason::kBlackList;
        break;
      case AmpLevel::kO3:
        r.want16 = true;
        r.reason = IntentReason::kLevelDefault;
        break;
      case AmpLevel::kAuto: {
        // The op's category in the op set's catalogue; an op without one
        // follows (PolicyStep's constructor warned about it).
        AmpCategory cls = amp_category(n.op);
        if (cls == AmpCategory::kNone) cls = AmpCategory::kFollow;
        // A custom list replaces the default one: ops it no longer names
        // fall back to following their inputs.
        if (custom_white_ && cls == AmpCategory::kWhite) cls = AmpCategory::kFollow;
        if (custom_black_ && cls == AmpCategory::kBlack) cls = AmpCategory::kFollow;
        if (custom_white_ && white_[op_index]) cls = AmpCategory::kWhite;
        if (custom_black_ && black_[op_index]) cls = AmpCategory::kBlack;
        if (black_origin) cls = AmpCategory::kBlack;
        if (cls == AmpCategory::kWhite) {
          r.want16 = true;
          r.reason = IntentReason::kWhiteList;
        } else if (cls == AmpCategory::kBlack) {
          r.reason = IntentReason::kBlackList;
        } else {
          // Activations decide; constants (weights) adapt to them.
          int n16 = 0, nfloat = 0;
          bool first_is_16 = false;
          for (ValueId v : n.inputs) {
            const Value& val = g.value(v);
            if (val.is_constant() || !is_float(val.type.dtype)) continue;
            const bool is16 = is_16bit_float(home_dtype(v));
            if (nfloat == 0) first_is_16 = is16;
            ++nfloat;
            n16 += is16 ? 1 : 0;
          }
          if (cls == AmpCategory::kPromote) {
            r.want16 = nfloat > 0 && n16 == nfloat;
            r.reason = IntentReason::kPromote;
          } else {
            r.want16 = first_is_16;
            r.reason = IntentReason::kFollowsInput;
          }
        }
        break;
      }
    }
  for (size_t i = policy_.overrides.size(); i-- > 0;) {
    if (policy_.overrides[i].matches(n.name)) {
      r.want16 = policy_.overrides[i].force_16bit;
      r.reason = IntentReason::kOverride;
      break;
    }
  }
  // Mark every matching override used, not only the winner.
  for (size_t i = 0; i < policy_.overrides.size(); ++i)
    if (policy_.overrides[i].matches(n.name)) override_used_[i] = true;
  // Data movement computes nothing: at every level but O0 it takes the
  // dtype of its float inputs (16-bit when all of them are), so no Cast
  // pair ever brackets it; moving a weight keeps the weight's dtype (the
  // consumer's Cast of it is folded at load). An override still wins.
  if (is_data_movement(n.op) && policy_.level != AmpLevel::kO0 &&
      r.reason != IntentReason::kOverride) {
    int n16 = 0, nfloat = 0;
    for (ValueId v : n.inputs) {
      if (!is_float(g.value(v).type.dtype)) continue;
      ++nfloat;
      n16 += home_dtype(v) == policy_.half ? 1 : 0;
    }
    r.want16 = nfloat > 0 && n16 == nfloat;
    r.reason = IntentReason::kFollowsInput;
  }
  // A layer that overflowed in 16-bit training stays f32, over an override
  // too: the override is what overflowed.
  if (const auto fb = fallback_.find(n.name); fb != fallback_.end() && n.grad_of.empty()) {
    fb->second = true;
    r.want16 = false;
    r.reason = IntentReason::kOverflowFallback;
  }
  // Integer arithmetic written in f32 (an imported quantization op): a
  // 16-bit value holds 11 significant bits, so the sums, products and the
  // rounding would change the integers. Not a precision choice: an
  // override (marked used above) does not move it either.
  // A synchronized BatchNorm's statistics (train/sync_batch_norm.hpp) are
  // kept f32 the same way, for their range (Σx² passes f16's 65504) and
  // the f32 all-reduce of data-parallel training.
  if (n.keep_f32) {
    r.want16 = false;
    r.reason =
        n.origin == "SyncBatchNorm" ? IntentReason::kBatchStatistics : IntentReason::kIntegerExact;
  }
  if (n.grad_of.empty() && !want16_by_node_.empty())
    if (const auto it = want16_by_node_.find(n.name); it != want16_by_node_.end())
      it->second = r.want16;
  return r;
}

void PolicyStep::check_every_override_used(const std::string& graph_name) const {
  for (const auto& [name, used] : fallback_)
    if (!used)
      throw std::invalid_argument("overflow fallback layer '" + name +
                                  "' is not a node of graph '" + graph_name + "'");
  for (size_t i = 0; i < policy_.overrides.size(); ++i)
    if (!override_used_[i])
      throw std::invalid_argument("override '" + policy_.overrides[i].pattern +
                                  "' matches no node in graph '" + graph_name + "'");
}

}  // namespace ampx
