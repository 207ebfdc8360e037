#include "node_classes.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <variant>

namespace ampx::planner_detail {

namespace {

// Writes a key into a reused buffer with memcpy (a key per node: appends
// through std::string cost more than the bytes). Every variable-length part
// is preceded by its length, so equal keys mean equal contents.
class KeyWriter {
 public:
  explicit KeyWriter(std::string& key) : key_(key) {}
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(&v, sizeof v);
  }
  void bytes(const void* p, size_t n) {
    pod(n);
    put(p, n);
  }
  // The buffer holds the key, and only it.
  void finish() { key_.resize(pos_); }

 private:
  void put(const void* p, size_t n) {
    if (pos_ + n > key_.size()) key_.resize(std::max(2 * key_.size(), pos_ + n + 64));
    if (n) std::memcpy(key_.data() + pos_, p, n);  // p may be null when n is 0
    pos_ += n;
  }
  std::string& key_;
  size_t pos_ = 0;
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
  std::string key, shape_key;
  auto shape_id = [&](ValueId v) {
    int32_t& id = value_shape_[static_cast<size_t>(v)];
    if (id < 0) {
      const Shape& s = g.value(v).type.shape;
      shape_key.assign(reinterpret_cast<const char*>(s.data()), s.size() * sizeof(int64_t));
      id = shapes.try_emplace(shape_key, static_cast<int32_t>(shapes.size())).first->second;
    }
    return id;
  };
  // An input as its dtype and interned shape (8 bytes; its producer came
  // first in a graph in topological order, so the shape is known), an
  // output as its dtype and dims: a node of a known class gives its outputs
  // the shapes its class recorded, so a shape is hashed once per class.
  auto type_code = [&](ValueId v) {
    return (static_cast<uint64_t>(shape_id(v)) << 32) |
           static_cast<uint32_t>(g.value(v).type.dtype);
  };
  std::vector<int32_t> class_outputs;  // the output shapes of each class
  std::vector<size_t> class_begin;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& n = g.node(id);
    KeyWriter w(key);
    w.pod(static_cast<int32_t>(n.op));
    w.pod(n.inputs.size());
    for (ValueId v : n.inputs) w.pod(type_code(v));
    w.pod(n.outputs.size());
    for (ValueId v : n.outputs) {
      const TensorType& t = g.value(v).type;
      w.pod(static_cast<int32_t>(t.dtype));
      w.bytes(t.shape.data(), t.shape.size() * sizeof(int64_t));
    }
    w.pod(n.attrs.size());
    for (const auto& entry : n.attrs) {
      w.bytes(entry.first.data(), entry.first.size());
      write_attr(w, entry.second);
    }
    w.finish();
    const auto [it, added] = classes.try_emplace(key, static_cast<int32_t>(classes.size()));
    const int32_t c = it->second;
    node_class_[static_cast<size_t>(id)] = c;
    if (added) {
      class_begin.push_back(class_outputs.size());
      for (ValueId v : n.outputs) class_outputs.push_back(shape_id(v));
    }
    const size_t begin = class_begin[static_cast<size_t>(c)];
    for (size_t i = 0; i < n.outputs.size(); ++i)
      value_shape_[static_cast<size_t>(n.outputs[i])] = class_outputs[begin + i];
  }
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) (void)shape_id(v);
  classes_ = classes.size();
  shapes_ = shapes.size();
}

}  // namespace ampx::planner_detail
