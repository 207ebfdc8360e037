#include "ampx/opset/activation.hpp"

#include <algorithm>
#include <array>

namespace ampx::opset {
namespace {

constexpr std::array<std::string_view, 11> kNames = {
    "none",      "relu",    "gelu",  "gelu_tanh", "clip",      "hardsigmoid",
    "hardswish", "sigmoid", "swish", "tanh",      "leaky_relu"};

}  // namespace

std::span<const std::string_view> activation_names() {
  return kNames;
}

bool is_activation_name(std::string_view name) {
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

std::string activation_names_list() {
  std::string s;
  for (std::string_view n : kNames) {
    if (!s.empty()) s += ", ";
    s += "'";
    s += n;
    s += "'";
  }
  return s;
}

}  // namespace ampx::opset
