#include <ampx/session/given_inputs.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace ampx {

ModelOptions with_given_inputs(ModelOptions mo, std::string_view model,
                               const std::vector<GivenInput>& given) {
  if (model.starts_with("builtin:")) return mo;
  for (const GivenInput& g : given) {
    if (mo.input_shapes.emplace(g.name, g.tensor.type.shape).second)
      mo.input_shape_origins[g.name] = "--input " + g.spec;
    // A shape, axes or scales computed from an input at run time are
    // evaluated from its array at import (the plan is built for them).
    mo.input_values[g.name] = g.tensor;
  }
  return mo;
}

std::vector<HostTensor> make_inputs(const Graph& graph, uint64_t seed,
                                    std::vector<GivenInput> given_inputs) {
  auto inputs = random_inputs(graph, seed);
  std::vector<bool> given(inputs.size(), false);
  for (GivenInput& g : given_inputs) {
    const std::string& name = g.name;
    size_t i = 0;
    while (i < inputs.size() && inputs[i].name != name) ++i;
    if (i == inputs.size()) {
      std::string known;
      for (const auto& t : inputs) known += (known.empty() ? "" : ", ") + t.name;
      throw std::invalid_argument("--input '" + g.spec + "': the model has no input '" + name +
                                  "' (inputs: " + known + ")");
    }
    HostTensor& t = g.tensor;
    if (t.type.dtype != inputs[i].type.dtype || t.type.shape != inputs[i].type.shape)
      throw std::invalid_argument(
          fmt::format("--input '{}': the file holds {}{}, input '{}' is {}{}", g.spec,
                      dtype_name(t.type.dtype), shape_str(t.type.shape), name,
                      dtype_name(inputs[i].type.dtype), shape_str(inputs[i].type.shape)));
    inputs[i] = std::move(t);
    given[i] = true;
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!given_inputs.empty() && !given[i])
      spdlog::info("input '{}' not given: seeded random values", inputs[i].name);
  return inputs;
}

}  // namespace ampx
