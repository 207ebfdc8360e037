// Inputs given as arrays (`--input NAME=FILE.npy`) beside seeded random
// ones: their shapes pin an ONNX model's symbolic dimensions, and a shape,
// axes or scales the model computes from an input are evaluated from its
// array at import (docs/ONNX.md).
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/models/load_model.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ampx {

struct GivenInput {
  std::string spec;  // as given ("x=a.npy"): errors name it
  std::string name;
  HostTensor tensor;
};

// `options` plus the shape of every given array for an input
// `input_shapes` does not name, and the arrays as input values (ONNX
// models; a built-in model has fixed shapes, checked in make_inputs).
ModelOptions with_given_inputs(ModelOptions options, std::string_view model,
                               const std::vector<GivenInput>& given);
// Seeded random inputs, replaced by the given arrays, which must match the
// graph input's dtype and shape exactly (std::invalid_argument naming the
// --input).
std::vector<HostTensor> make_inputs(const Graph& graph, uint64_t seed,
                                    std::vector<GivenInput> given);

}  // namespace ampx
