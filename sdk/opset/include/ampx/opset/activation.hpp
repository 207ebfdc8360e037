// The `activation` epilogue of Conv2d, MatMul and Gemm (docs/OPS.md,
// "Fused epilogues"): the names the IR accepts and their parameters. Fusion
// writes them, shape inference checks them, ONNX export spells them out
// again, and each backend maps them to its own kernels (a plugin answers
// `unsupported` for a name it has no kernel for, and nothing is fused).
//
// Parameters travel as the float attributes `activation_alpha` and
// `activation_beta`:
//   clip         min(max(x, alpha), beta)   (defaults -inf, +inf)
//   hardsigmoid  max(0, min(1, alpha x + beta))   (defaults 0.2, 0.5)
//   leaky_relu   x < 0 ? alpha x : x   (default 0.01)
// The others (relu, gelu, gelu_tanh, hardswish, sigmoid, swish = x sigmoid(x),
// tanh) take none.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ampx::opset {

// Every accepted value of `activation`, "none" first.
std::span<const std::string_view> activation_names();
bool is_activation_name(std::string_view name);
// "'none', 'relu', ..." for error messages.
std::string activation_names_list();

}  // namespace ampx::opset
