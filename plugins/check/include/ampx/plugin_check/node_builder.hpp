// An owning builder for ampx_node_desc in tests:
//
//   ampx::test::NodeBuilder b("Conv2d", "conv1");
//   b.input(AMPX_DTYPE_F32, {1, 3, 8, 8}).input(AMPX_DTYPE_F32, {4, 3, 3, 3})
//    .output(AMPX_DTYPE_F32, {1, 4, 6, 6}).attr_ints("strides", {1, 1});
//   const ampx_node_desc& d = b.desc();  // valid until the builder changes
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampx/backend_api.h"

namespace ampx::check {

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string op_type, std::string name = "node")
      : op_(std::move(op_type)), name_(std::move(name)) {}

  NodeBuilder& input(ampx_dtype dt, std::vector<int64_t> dims, const void* const_data = nullptr) {
    inputs_.push_back({dt, std::move(dims), const_data});
    return *this;
  }
  NodeBuilder& output(ampx_dtype dt, std::vector<int64_t> dims) {
    outputs_.push_back({dt, std::move(dims), nullptr});
    return *this;
  }
  NodeBuilder& attr_int(std::string name, int64_t v) {
    return add(std::move(name), AMPX_ATTR_INT, [&](Attr& a) { a.i = v; });
  }
  NodeBuilder& attr_float(std::string name, double v) {
    return add(std::move(name), AMPX_ATTR_FLOAT, [&](Attr& a) { a.f = v; });
  }
  NodeBuilder& attr_ints(std::string name, std::vector<int64_t> v) {
    return add(std::move(name), AMPX_ATTR_INTS, [&](Attr& a) { a.ints = std::move(v); });
  }
  NodeBuilder& attr_floats(std::string name, std::vector<double> v) {
    return add(std::move(name), AMPX_ATTR_FLOATS, [&](Attr& a) { a.floats = std::move(v); });
  }
  NodeBuilder& attr_str(std::string name, std::string v) {
    return add(std::move(name), AMPX_ATTR_STRING, [&](Attr& a) { a.s = std::move(v); });
  }

  const std::string& op_type() const { return op_; }
  const std::string& name() const { return name_; }

  // The C description, pointing into this builder.
  const ampx_node_desc& desc() {
    in_desc_.clear();
    out_desc_.clear();
    attr_desc_.clear();
    for (const auto& t : inputs_) in_desc_.push_back(tensor(t));
    for (const auto& t : outputs_) out_desc_.push_back(tensor(t));
    for (const auto& a : attrs_) {
      ampx_attr c{};
      c.struct_size = sizeof c;
      c.name = a.name.c_str();
      c.kind = a.kind;
      c.i = a.i;
      c.f = a.f;
      if (a.kind == AMPX_ATTR_INTS) {
        c.ints = a.ints.data();
        c.count = a.ints.size();
      } else if (a.kind == AMPX_ATTR_FLOATS) {
        c.floats = a.floats.data();
        c.count = a.floats.size();
      }
      c.s = a.s.c_str();
      attr_desc_.push_back(c);
    }
    node_ = {};
    node_.struct_size = sizeof node_;
    node_.op_type = op_.c_str();
    node_.name = name_.c_str();
    node_.num_inputs = in_desc_.size();
    node_.inputs = in_desc_.data();
    node_.num_outputs = out_desc_.size();
    node_.outputs = out_desc_.data();
    node_.num_attrs = attr_desc_.size();
    node_.attrs = attr_desc_.data();
    return node_;
  }

 private:
  struct Tensor {
    ampx_dtype dtype;
    std::vector<int64_t> dims;
    const void* const_data;
  };
  struct Attr {
    std::string name;
    ampx_attr_kind kind;
    int64_t i = 0;
    double f = 0;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::string s;
  };
  template <class Fn>
  NodeBuilder& add(std::string name, ampx_attr_kind kind, Fn&& fill) {
    Attr a;
    a.name = std::move(name);
    a.kind = kind;
    fill(a);
    attrs_.push_back(std::move(a));
    return *this;
  }
  static ampx_tensor_desc tensor(const Tensor& t) {
    ampx_tensor_desc d{};
    d.struct_size = sizeof d;
    d.dtype = t.dtype;
    d.rank = static_cast<int32_t>(t.dims.size());
    d.dims = t.dims.data();
    d.const_data = t.const_data;
    return d;
  }

  std::string op_, name_;
  std::vector<Tensor> inputs_, outputs_;
  std::vector<Attr> attrs_;
  std::vector<ampx_tensor_desc> in_desc_, out_desc_;
  std::vector<ampx_attr> attr_desc_;
  ampx_node_desc node_{};
};

}  // namespace ampx::check
