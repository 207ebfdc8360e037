#include <ampx/models/builtin_models.hpp>
#include <ampx/models/load_model.hpp>

#include <stdexcept>
#include <string>

namespace ampx {

Graph load_model(std::string_view spec) {
  constexpr std::string_view kBuiltin = "builtin:";
  if (spec.starts_with(kBuiltin)) return make_builtin_model(spec.substr(kBuiltin.size()));
  throw std::invalid_argument(
      "model '" + std::string(spec) +
      "': expected builtin:NAME (builtin:cnn, builtin:mlp, builtin:encoder)");
}

}  // namespace ampx
