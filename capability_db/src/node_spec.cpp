#include <ampx/capability/node_spec.hpp>
#include <ampx/plugin_support.hpp>

namespace ampx::capability {

NodeSpec::NodeSpec(std::string op_type, std::string name)
    : op_(std::move(op_type)), name_(std::move(name)) {
  rebuild();
}

NodeSpec::NodeSpec(const NodeSpec& o)
    : op_(o.op_), name_(o.name_), inputs_(o.inputs_), outputs_(o.outputs_), attrs_(o.attrs_) {
  rebuild();
}

NodeSpec& NodeSpec::operator=(const NodeSpec& o) {
  if (this != &o) {
    op_ = o.op_;
    name_ = o.name_;
    inputs_ = o.inputs_;
    outputs_ = o.outputs_;
    attrs_ = o.attrs_;
    rebuild();
  }
  return *this;
}

NodeSpec& NodeSpec::input(ampx_dtype dt, std::vector<int64_t> dims) {
  inputs_.push_back({dt, std::move(dims)});
  rebuild();
  return *this;
}

NodeSpec& NodeSpec::constant_input(size_t index, std::vector<std::byte> bytes) {
  inputs_.at(index).constant = std::move(bytes);
  rebuild();
  return *this;
}

NodeSpec& NodeSpec::output(ampx_dtype dt, std::vector<int64_t> dims) {
  outputs_.push_back({dt, std::move(dims)});
  rebuild();
  return *this;
}

NodeSpec& NodeSpec::attr_int(std::string name, int64_t v) {
  attrs_.push_back({std::move(name), AMPX_ATTR_INT, v, 0, {}, {}});
  rebuild();
  return *this;
}

NodeSpec& NodeSpec::attr_float(std::string name, double v) {
  attrs_.push_back({std::move(name), AMPX_ATTR_FLOAT, 0, v, {}, {}});
  rebuild();
  return *this;
}

NodeSpec& NodeSpec::attr_ints(std::string name, std::vector<int64_t> v) {
  attrs_.push_back({std::move(name), AMPX_ATTR_INTS, 0, 0, std::move(v), {}});
  rebuild();
  return *this;
}

NodeSpec& NodeSpec::attr_string(std::string name, std::string v) {
  attrs_.push_back({std::move(name), AMPX_ATTR_STRING, 0, 0, {}, std::move(v)});
  rebuild();
  return *this;
}

void NodeSpec::rebuild() {
  auto tensor = [](const Tensor& t) {
    ampx_tensor_desc d{};
    d.struct_size = sizeof d;
    d.dtype = t.dtype;
    d.rank = static_cast<int32_t>(t.dims.size());
    d.dims = t.dims.data();
    d.const_data = t.constant.empty() ? nullptr : t.constant.data();
    return d;
  };
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
}

uint64_t tensor_bytes(const NodeSpec::Tensor& t) {
  uint64_t n = 1;
  for (const int64_t d : t.dims) n *= static_cast<uint64_t>(d);
  return n * plugin_support::dtype_size(t.dtype);
}

const char* dtype_name(ampx_dtype dt) {
  return plugin_support::dtype_name(dt);
}

}  // namespace ampx::capability
