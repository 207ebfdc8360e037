// The C++ graph builder: adds nodes with their output types inferred and
// checked on the spot, so a mistake is reported at the line that made it.
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace ampx {

class GraphBuilder {
 public:
  // `seed` drives the deterministic random weights of random_weight().
  explicit GraphBuilder(std::string graph_name, uint64_t seed = 0x5eed);

  ValueId input(std::string name, DType dtype, Shape shape);
  // f32 data converted to `dtype` (f32, f16, bf16, f64) on storage.
  ValueId constant(std::string name, DType dtype, Shape shape, std::span<const float> data);
  ValueId constant_i64(std::string name, Shape shape, std::span<const int64_t> data);
  // Uniform in [-scale, scale]; deterministic for a given seed and call order.
  ValueId random_weight(std::string name, Shape shape, float scale, DType dtype = DType::kF32);

  // Generic node with one output; throws GraphError naming the node when the
  // inputs, attributes or name are invalid.
  ValueId add(OpType op, std::string name, std::vector<ValueId> inputs, AttrMap attrs = {});
  std::vector<ValueId> add_multi(OpType op, std::string name, std::vector<ValueId> inputs,
                                 AttrMap attrs = {});
  // By op name, as importers and scripts have it; an unknown op is a
  // GraphError "node 'NAME': unknown op 'X'".
  ValueId add(std::string_view op, std::string name, std::vector<ValueId> inputs,
              AttrMap attrs = {});

  // Layers with their own random weights (He-style scale), the building
  // blocks of the built-in models.
  ValueId conv2d(const std::string& name, ValueId x, int64_t out_channels, int64_t kernel,
                 int64_t stride = 1, int64_t pad = 0, int64_t group = 1, bool bias = true);
  ValueId batch_norm(const std::string& name, ValueId x);
  ValueId layer_norm(const std::string& name, ValueId x);
  // Gemm with W [out, in] and transB = 1, as a framework's Dense/Linear.
  ValueId dense(const std::string& name, ValueId x, int64_t out_features, bool bias = true);
  ValueId unary(OpType op, const std::string& name, ValueId x) { return add(op, name, {x}); }

  void output(ValueId v);
  const TensorType& type(ValueId v) const { return graph_.value(v).type; }
  const Graph& graph() const { return graph_; }
  // Verifies the whole graph and hands it over.
  Graph build() &&;

 private:
  Graph graph_;
  std::unordered_set<std::string> node_names_;  // duplicate check in O(1)
  std::mt19937_64 rng_;
};

}  // namespace ampx
