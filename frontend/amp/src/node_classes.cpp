#include "node_classes.hpp"

#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <variant>

namespace ampx::planner_detail {

namespace {

// Appends the bytes of a node's class key. Every variable-length part is
// preceded by its length, so equal keys mean equal contents.
class KeyWriter {
 public:
  explicit KeyWriter(std::string& key) : key_(key) { key_.clear(); }
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    key_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void bytes(const void* p, size_t n) {
    pod(n);
    key_.append(static_cast<const char*>(p), n);
  }
  void type(const TensorType& t) {
    pod(static_cast<int32_t>(t.dtype));
    bytes(t.shape.data(), t.shape.size() * sizeof(int64_t));
  }

 private:
  std::string& key_;
};

void write_attr(KeyWriter& w, const Attribute& a) {
  w.pod(a.index());
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          w.bytes(v.data(), v.size());
        else if constexpr (std::is_arithmetic_v<T>)
          w.pod(v);
        else
          w.bytes(v.data(), v.size() * sizeof(typename T::value_type));
      },
      a);
}

}  // namespace

NodeClasses::NodeClasses(const Graph& g)
    : node_class_(g.num_nodes(), -1), value_shape_(g.num_values(), -1) {
  std::unordered_map<std::string, int32_t> classes, shapes;
  // The shapes of each class's outputs, so that a node of a known class
  // gives its outputs their shapes without a lookup.
  std::vector<int32_t> class_outputs;
  std::vector<size_t> class_begin;
  std::string key;
  auto shape_id = [&](const Shape& s) {
    key.assign(reinterpret_cast<const char*>(s.data()), s.size() * sizeof(int64_t));
    return shapes.try_emplace(key, static_cast<int32_t>(shapes.size())).first->second;
  };
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    if (g.value(v).producer == kNone)
      value_shape_[static_cast<size_t>(v)] = shape_id(g.value(v).type.shape);
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& n = g.node(id);
    KeyWriter w(key);
    w.pod(static_cast<int32_t>(n.op));
    w.pod(n.inputs.size());
    for (ValueId v : n.inputs) w.type(g.value(v).type);
    w.pod(n.outputs.size());
    for (ValueId v : n.outputs) w.type(g.value(v).type);
    w.pod(n.attrs.size());
    for (const auto& entry : n.attrs) {
      w.bytes(entry.first.data(), entry.first.size());
      write_attr(w, entry.second);
    }
    const auto [it, added] = classes.try_emplace(key, static_cast<int32_t>(classes.size()));
    const int32_t c = it->second;
    node_class_[static_cast<size_t>(id)] = c;
    if (added) {
      class_begin.push_back(class_outputs.size());
      for (ValueId v : n.outputs) class_outputs.push_back(shape_id(g.value(v).type.shape));
    }
    const size_t begin = class_begin[static_cast<size_t>(c)];
    for (size_t i = 0; i < n.outputs.size(); ++i)
      value_shape_[static_cast<size_t>(n.outputs[i])] = class_outputs[begin + i];
  }
  classes_ = classes.size();
  shapes_ = shapes.size();
}

}  // namespace ampx::planner_detail
