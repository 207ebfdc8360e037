// An owning ampx_node_desc: the probe builds node instances that must outlive
// the builder calls (query, prepare) and carry their own shapes and
// attributes. desc() points into the object; it stays valid until the
// NodeSpec is changed or destroyed.
#pragma once

#include <ampx/backend_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ampx::capability {

class NodeSpec {
 public:
  struct Tensor {
    ampx_dtype dtype = AMPX_DTYPE_F32;
    std::vector<int64_t> dims;
    // A weight's bytes, passed as const_data (empty: not a constant).
    std::vector<std::byte> constant{};
  };

  explicit NodeSpec(std::string op_type, std::string name = "probe");
  NodeSpec(const NodeSpec& other);
  NodeSpec& operator=(const NodeSpec& other);
  NodeSpec(NodeSpec&&) noexcept = default;
  NodeSpec& operator=(NodeSpec&&) noexcept = default;

  NodeSpec& input(ampx_dtype dt, std::vector<int64_t> dims);
  NodeSpec& output(ampx_dtype dt, std::vector<int64_t> dims);
  NodeSpec& attr_int(std::string name, int64_t v);
  NodeSpec& attr_float(std::string name, double v);
  NodeSpec& attr_ints(std::string name, std::vector<int64_t> v);
  NodeSpec& attr_string(std::string name, std::string v);
  // Makes input `index` a constant with these bytes (the whole tensor), as
  // the executor passes weights: a backend may pre-pack it at prepare.
  NodeSpec& constant_input(size_t index, std::vector<std::byte> bytes);

  const std::string& op_type() const noexcept { return op_; }
  const std::vector<Tensor>& inputs() const noexcept { return inputs_; }
  const std::vector<Tensor>& outputs() const noexcept { return outputs_; }
  const ampx_node_desc& desc() const noexcept { return node_; }

 private:
  struct Attr {
    std::string name;
    ampx_attr_kind kind = AMPX_ATTR_INT;
    int64_t i = 0;
    double f = 0;
    std::vector<int64_t> ints;
    std::string s;
  };
  void rebuild();  // refreshes the C view after any change

  std::string op_, name_;
  std::vector<Tensor> inputs_, outputs_;
  std::vector<Attr> attrs_;
  std::vector<ampx_tensor_desc> in_desc_, out_desc_;
  std::vector<ampx_attr> attr_desc_;
  ampx_node_desc node_{};
};

// Bytes of one tensor (f32 4, f16/bf16 2, i64 8, ...).
uint64_t tensor_bytes(const NodeSpec::Tensor& t);
const char* dtype_name(ampx_dtype dt);

}  // namespace ampx::capability
