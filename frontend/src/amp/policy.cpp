#include <ampx/amp/policy.hpp>

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
  const auto star = pattern.find('*');
  if (pattern.empty() || pattern == "*" ||
      (star != std::string_view::npos && star != pattern.size() - 1) ||
      pattern.find_first_of(" \t,") != std::string_view::npos)
    throw std::invalid_argument(std::string(flag) + " '" + std::string(pattern) +
                                "': expected a node name or a name prefix ending in '*'");
}

// MindSpore's O1 white list (docs/PLANNER.md): Conv2D(+Transpose), MatMul,
// Dense, PReLU and ReLU.
std::vector<OpType> default_white_list() {
  return {OpType::kConv2d, OpType::kMatMul,        OpType::kGemm,
          OpType::kRelu,   OpType::kConvTranspose, OpType::kPRelu};
}
std::vector<OpType> default_black_list() {
  return {OpType::kBatchNorm, OpType::kLayerNorm};
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

}  // namespace ampx
