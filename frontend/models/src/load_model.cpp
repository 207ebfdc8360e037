#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ampx {

Graph load_model(std::string_view spec, const ModelOptions& options) {
  constexpr std::string_view kBuiltin = "builtin:";
  if (spec.starts_with(kBuiltin)) {
    if (!options.input_shapes.empty())
      throw std::invalid_argument("model '" + std::string(spec) +
                                  "': --input-shape applies to ONNX models only");
    return make_builtin_model(spec.substr(kBuiltin.size()));
  }
  if (onnx_io::is_onnx_path(spec)) {
    // A path that names nothing, or no regular file (a FIFO, /dev/zero, a
    // directory), is a bad argument (exit 2), not a bad file.
    try {
      const fileio::RegularFile file{std::string(spec)};
    } catch (const fileio::FileError& e) {
      throw std::invalid_argument("model '" + fileio::printable_path(std::string(spec)) +
                                  "': " + e.reason());
    }
    onnx_io::ImportOptions io;
    io.input_shapes = options.input_shapes;
    io.input_shape_origins = options.input_shape_origins;
    io.input_values = options.input_values;
    io.composite_inputs = options.composite_inputs;
    io.batch_size = options.batch_size;
    io.max_tensor_bytes = options.max_tensor_bytes;
    return onnx_io::import_onnx(std::string(spec), io);
  }
  std::string known;
  for (std::string_view n : builtin_model_names())
    known += (known.empty() ? "" : ", ") + ("builtin:" + std::string(n));
  throw std::invalid_argument("model '" + std::string(spec) + "': expected builtin:NAME (" + known +
                              ") or a path ending in .onnx");
}

Shape parse_shape(std::string_view dims) {
  Shape shape;
  size_t pos = 0;
  while (pos <= dims.size()) {
    const size_t x = std::min(dims.find('x', pos), dims.size());
    const std::string_view part = dims.substr(pos, x - pos);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v <= 0)
      throw std::invalid_argument(
          "shape '" + std::string(dims) +
          "': expected positive dimensions joined by 'x', e.g. 1x3x224x224");
    shape.push_back(v);
    pos = x + 1;
  }
  return shape;
}

}  // namespace ampx
