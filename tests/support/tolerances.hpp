// The tolerances per dtype and compute mode are shipped with the op set
// library (sdk/opset/include/ampx/opset/tolerances.hpp).
#pragma once

#include <ampx/opset/tolerances.hpp>

namespace ampx::test {
using opset::ComputeMode;
using opset::model_tolerance;
using opset::relative_error;
using opset::tolerance;
}  // namespace ampx::test
