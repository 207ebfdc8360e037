#include <ampx/half.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/ir/shape_inference.hpp>
#include <ampx/ir/verifier.hpp>

#include <cmath>
#include <cstring>

namespace ampx {
namespace {

std::vector<std::byte> encode_floats(DType dtype, std::span<const float> data) {
  std::vector<std::byte> out(data.size() * dtype_size(dtype));
  for (size_t i = 0; i < data.size(); ++i) {
    switch (dtype) {
      case DType::kF32:
        std::memcpy(out.data() + 4 * i, &data[i], 4);
        break;
      case DType::kF64: {
        const double d = data[i];
        std::memcpy(out.data() + 8 * i, &d, 8);
        break;
      }
      case DType::kF16: {
        const uint16_t h = float_to_f16_bits(data[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
        break;
      }
      case DType::kBF16: {
        const uint16_t h = float_to_bf16_bits(data[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
        break;
      }
      default:
        throw GraphError("constant dtype " + std::string(dtype_name(dtype)) +
                         " cannot hold float data");
    }
  }
  return out;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string graph_name, uint64_t seed) : rng_(seed) {
  graph_.name = std::move(graph_name);
}

ValueId GraphBuilder::input(std::string name, DType dtype, Shape shape) {
  return graph_.add_input(std::move(name), {dtype, std::move(shape)});
}

ValueId GraphBuilder::constant(std::string name, DType dtype, Shape shape,
                               std::span<const float> data) {
  if (static_cast<int64_t>(data.size()) != element_count(shape))
    throw GraphError("constant '" + name + "': " + std::to_string(data.size()) +
                     " values for shape " + shape_str(shape));
  return graph_.add_constant(std::move(name), {dtype, std::move(shape)},
                             encode_floats(dtype, data));
}

ValueId GraphBuilder::constant_i64(std::string name, Shape shape, std::span<const int64_t> data) {
  if (static_cast<int64_t>(data.size()) != element_count(shape))
    throw GraphError("constant '" + name + "': " + std::to_string(data.size()) +
                     " values for shape " + shape_str(shape));
  std::vector<std::byte> bytes(data.size() * 8);
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return graph_.add_constant(std::move(name), {DType::kI64, std::move(shape)}, std::move(bytes));
}

ValueId GraphBuilder::random_weight(std::string name, Shape shape, float scale, DType dtype) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> data(static_cast<size_t>(element_count(shape)));
  for (float& x : data) x = dist(rng_);
  return constant(std::move(name), dtype, std::move(shape), data);
}

std::vector<ValueId> GraphBuilder::add_multi(OpType op, std::string name,
                                             std::vector<ValueId> inputs, AttrMap attrs) {
  if (name.empty()) throw GraphError("a " + std::string(op_name(op)) + " node needs a name");
  if (node_names_.contains(name)) throw GraphError("node '" + name + "': duplicate node name");
  std::vector<TensorType> in_types;
  for (ValueId v : inputs) {
    if (v < 0 || static_cast<size_t>(v) >= graph_.num_values())
      throw GraphError("node '" + name + "' (" + std::string(op_name(op)) +
                       "): input refers to unknown value #" + std::to_string(v));
    in_types.push_back(graph_.value(v).type);
  }
  auto out_types = infer_output_types(op, in_types, attrs, name);
  node_names_.insert(name);
  const NodeId id = graph_.add_node(std::move(name), op, std::move(inputs), std::move(out_types),
                                    std::move(attrs));
  return graph_.node(id).outputs;
}

ValueId GraphBuilder::add(OpType op, std::string name, std::vector<ValueId> inputs, AttrMap attrs) {
  auto outs = add_multi(op, std::move(name), std::move(inputs), std::move(attrs));
  return outs.at(0);
}

ValueId GraphBuilder::add(std::string_view op, std::string name, std::vector<ValueId> inputs,
                          AttrMap attrs) {
  const auto parsed = parse_op(op);
  if (!parsed) throw GraphError("node '" + name + "': unknown op '" + std::string(op) + "'");
  return add(*parsed, std::move(name), std::move(inputs), std::move(attrs));
}

ValueId GraphBuilder::conv2d(const std::string& name, ValueId x, int64_t out_channels,
                             int64_t kernel, int64_t stride, int64_t pad, int64_t group,
                             bool bias) {
  const int64_t cin = type(x).shape.at(1);
  const int64_t fan_in = cin / group * kernel * kernel;
  const float scale = std::sqrt(6.0f / static_cast<float>(fan_in));
  std::vector<ValueId> ins{
      x, random_weight(name + ".weight", {out_channels, cin / group, kernel, kernel}, scale)};
  if (bias) ins.push_back(random_weight(name + ".bias", {out_channels}, 0.1f));
  return add(OpType::kConv2d, name, std::move(ins),
             {{"strides", std::vector<int64_t>{stride, stride}},
              {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
              {"group", group}});
}

ValueId GraphBuilder::batch_norm(const std::string& name, ValueId x) {
  const int64_t c = type(x).shape.at(1);
  std::uniform_real_distribution<float> pos(0.5f, 1.5f);
  std::vector<float> scale(static_cast<size_t>(c)), var(static_cast<size_t>(c));
  for (auto& v : scale) v = pos(rng_);
  for (auto& v : var) v = pos(rng_);
  const ValueId s = constant(name + ".scale", DType::kF32, {c}, scale);
  const ValueId b = random_weight(name + ".bias", {c}, 0.1f);
  const ValueId m = random_weight(name + ".mean", {c}, 0.1f);
  const ValueId v = constant(name + ".var", DType::kF32, {c}, var);
  return add(OpType::kBatchNorm, name, {x, s, b, m, v}, {{"epsilon", 1e-5}});
}

ValueId GraphBuilder::layer_norm(const std::string& name, ValueId x) {
  const int64_t c = type(x).shape.back();
  std::vector<float> ones(static_cast<size_t>(c));
  std::uniform_real_distribution<float> pos(0.8f, 1.2f);
  for (auto& v : ones) v = pos(rng_);
  const ValueId s = constant(name + ".scale", DType::kF32, {c}, ones);
  const ValueId b = random_weight(name + ".bias", {c}, 0.1f);
  return add(OpType::kLayerNorm, name, {x, s, b}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}});
}

ValueId GraphBuilder::dense(const std::string& name, ValueId x, int64_t out_features, bool bias) {
  const int64_t in_features = type(x).shape.back();
  const float scale = std::sqrt(6.0f / static_cast<float>(in_features));
  std::vector<ValueId> ins{x, random_weight(name + ".weight", {out_features, in_features}, scale)};
  if (bias) ins.push_back(random_weight(name + ".bias", {out_features}, 0.1f));
  return add(OpType::kGemm, name, std::move(ins), {{"transB", int64_t{1}}});
}

void GraphBuilder::output(ValueId v) {
  graph_.add_output(v);
}

Graph GraphBuilder::build() && {
  verify_graph_or_throw(graph_);
  return std::move(graph_);
}

}  // namespace ampx
