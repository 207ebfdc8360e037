#include "decomposed_patterns.hpp"

#include <ampx/exec/host_tensor.hpp>
#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/shape_inference.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_set>

namespace ampx::onnx_io {
namespace {

class PatternFuser {
 public:
  explicit PatternFuser(Graph& g) : g_(g), consumers_(g.num_values()), output_(g.num_values()) {
    for (const Node& n : g.nodes())
      for (ValueId v : n.inputs) consumers_[static_cast<size_t>(v)].push_back(node_id(n));
    for (ValueId v : g.outputs()) output_[static_cast<size_t>(v)] = true;
    // A fused node must not take the name of a node that stays: an
    // exported MatMul "fc1" with its GELU epilogue as "fc1/Div", "fc1/Erf",
    // ... has the common prefix "fc1".
    for (const Node& n : g.nodes()) names_.insert(n.name);
  }

  int run() {
    int fused = 0;
    const auto n_nodes = static_cast<NodeId>(g_.num_nodes());
    for (NodeId id = 0; id < n_nodes; ++id) {
      if (taken_.contains(id)) continue;
      const OpType op = g_.node(id).op;
      if (op == OpType::kDiv && fuse_layer_norm(id)) ++fused;
      if (auto erf = parse_op("Erf"); erf && op == *erf && fuse_gelu(id)) ++fused;
    }
    return fused;
  }

 private:
  NodeId node_id(const Node& n) const { return static_cast<NodeId>(&n - g_.nodes().data()); }

  bool single_use(ValueId v) const {
    return consumers_[static_cast<size_t>(v)].size() == 1 && !output_[static_cast<size_t>(v)];
  }
  // The producer of `v` when it is an `op` node not yet part of a pattern.
  std::optional<NodeId> producer(ValueId v, OpType op) const {
    const NodeId p = g_.value(v).producer;
    if (p == kNone || taken_.contains(p) || g_.node(p).op != op) return std::nullopt;
    return p;
  }
  std::optional<NodeId> only_consumer(ValueId v, OpType op) const {
    if (!single_use(v)) return std::nullopt;
    const NodeId c = consumers_[static_cast<size_t>(v)][0];
    if (taken_.contains(c) || g_.node(c).op != op) return std::nullopt;
    return c;
  }
  std::optional<double> scalar(ValueId v) const {
    const Value& val = g_.value(v);
    if (!val.is_constant() || element_count(val.type.shape) != 1) return std::nullopt;
    return to_doubles(HostTensor{"", val.type, *val.constant}).at(0);
  }
  static bool near(std::optional<double> x, double want) {
    return x && std::abs(*x - want) <= 1e-3 * std::abs(want);
  }
  // The input of binary node `n` that is not `v` (nullopt when both are).
  std::optional<ValueId> other_input(NodeId n, ValueId v) const {
    const auto& in = g_.node(n).inputs;
    if (in.size() != 2) return std::nullopt;
    if (in[0] == v && in[1] != v) return in[1];
    if (in[1] == v && in[0] != v) return in[0];
    return std::nullopt;
  }

  // First axis of a keepdims reduction over trailing axes of `rank`.
  std::optional<int64_t> trailing_axis(NodeId reduce, int64_t rank) const {
    const Node& n = g_.node(reduce);
    if (attr_int(n.attrs, "keepdims", 1) != 1) return std::nullopt;
    auto axes = attr_ints(n.attrs, "axes");
    if (axes.empty()) return std::nullopt;
    for (auto& a : axes) a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i))
        return std::nullopt;
    return axes[0];
  }

  // Name for a fused node: the common path prefix of its pattern's node
  // names ("/encoder/layer.0/output/LayerNorm") when there is one.
  std::string fused_name(const std::vector<NodeId>& nodes, const std::string& fallback) {
    std::string prefix = g_.node(nodes[0]).name;
    for (NodeId n : nodes) {
      const std::string& s = g_.node(n).name;
      size_t k = 0;
      while (k < prefix.size() && k < s.size() && prefix[k] == s[k]) ++k;
      prefix.resize(k);
    }
    const auto slash = prefix.rfind('/');
    std::string name = slash != std::string::npos && slash > 0 ? prefix.substr(0, slash) : fallback;
    if (!names_.insert(name).second) name = fallback;
    names_.insert(name);
    return name;
  }

  std::string origin(const std::vector<NodeId>& nodes) const {
    std::string s;
    for (NodeId n : nodes) s += (s.empty() ? "" : "+") + std::string(op_name(g_.node(n).op));
    return s;
  }

  // Adds the fused node and points every use of `result` at its output.
  void replace(const std::vector<NodeId>& pattern, ValueId result, OpType op,
               std::vector<ValueId> inputs, AttrMap attrs, const std::string& name) {
    std::vector<TensorType> in_types;
    for (ValueId v : inputs) in_types.push_back(g_.value(v).type);
    auto out_types = infer_output_types(op, in_types, attrs, name);
    const NodeId id = g_.add_node(name, op, inputs, std::move(out_types), std::move(attrs));
    g_.node(id).origin = origin(pattern);
    const ValueId fused = g_.node(id).outputs.at(0);
    g_.value(fused).name = g_.value(result).name;
    // The fused value inherits the uses of the one it replaces (a later
    // pattern may start from it).
    consumers_.resize(g_.num_values());
    output_.resize(g_.num_values());
    consumers_[static_cast<size_t>(fused)] = consumers_[static_cast<size_t>(result)];
    output_[static_cast<size_t>(fused)] = output_[static_cast<size_t>(result)];
    for (NodeId c : consumers_[static_cast<size_t>(result)])
      for (ValueId& in : g_.node(c).inputs)
        if (in == result) in = fused;
    for (size_t i = 0; i < g_.outputs().size(); ++i)
      if (g_.outputs()[i] == result) g_.set_output(i, fused);
    for (NodeId n : pattern) taken_.insert(n);
  }

  bool fuse_layer_norm(NodeId div) {
    const Node& d = g_.node(div);
    const ValueId centered = d.inputs[0], denom = d.inputs[1];
    if (!single_use(denom)) return false;
    const auto sqrt_op = parse_op("Sqrt");
    const auto sqrt = sqrt_op ? producer(denom, *sqrt_op) : std::nullopt;
    if (!sqrt) return false;
    const ValueId var_eps = g_.node(*sqrt).inputs[0];
    const auto add = single_use(var_eps) ? producer(var_eps, OpType::kAdd) : std::nullopt;
    if (!add) return false;
    const auto& ai = g_.node(*add).inputs;
    const bool eps_second = scalar(ai[1]).has_value();
    const ValueId var = eps_second ? ai[0] : ai[1];
    const auto eps = scalar(eps_second ? ai[1] : ai[0]);
    if (!eps || !single_use(var)) return false;
    const auto mean2 = producer(var, OpType::kReduceMean);
    if (!mean2) return false;
    const ValueId sq = g_.node(*mean2).inputs[0];
    if (!single_use(sq)) return false;
    std::optional<NodeId> square;
    if (auto pw = parse_op("Pow"); pw && (square = producer(sq, *pw))) {
      if (g_.node(*square).inputs[0] != centered || !near(scalar(g_.node(*square).inputs[1]), 2.0))
        return false;
    } else if ((square = producer(sq, OpType::kMul))) {
      if (g_.node(*square).inputs[0] != centered || g_.node(*square).inputs[1] != centered)
        return false;
    } else {
      return false;
    }
    // `centered` feeds exactly the square and the Div.
    if (output_[static_cast<size_t>(centered)] ||
        consumers_[static_cast<size_t>(centered)].size() !=
            2 + (g_.node(*square).op == OpType::kMul))
      return false;
    const auto sub = producer(centered, OpType::kSub);
    if (!sub) return false;
    const ValueId x = g_.node(*sub).inputs[0], mean = g_.node(*sub).inputs[1];
    if (!single_use(mean)) return false;
    const auto mean1 = producer(mean, OpType::kReduceMean);
    if (!mean1 || g_.node(*mean1).inputs[0] != x) return false;
    const TensorType& xt = g_.value(x).type;
    if (!is_float(xt.dtype)) return false;
    const auto rank = static_cast<int64_t>(xt.shape.size());
    const auto axis = trailing_axis(*mean1, rank);
    if (!axis || trailing_axis(*mean2, rank) != axis) return false;

    std::vector<NodeId> pattern{*mean1, *sub, *square, *mean2, *add, *sqrt, div};
    ValueId result = d.outputs[0];
    const Shape norm_shape(xt.shape.begin() + *axis, xt.shape.end());
    // An affine Mul(gamma) and Add(beta) with constants of the normalised
    // shape join the node.
    auto affine = [&](OpType op) -> std::optional<ValueId> {
      const auto c = only_consumer(result, op);
      if (!c) return std::nullopt;
      const auto param = other_input(*c, result);
      if (!param || !g_.value(*param).is_constant()) return std::nullopt;
      Shape ps = g_.value(*param).type.shape;
      while (ps.size() > norm_shape.size() && ps.front() == 1) ps.erase(ps.begin());
      if (ps != norm_shape || g_.value(*param).type.dtype != xt.dtype) return std::nullopt;
      pattern.push_back(*c);
      result = g_.node(*c).outputs[0];
      return *param;
    };
    std::vector<ValueId> inputs{x};
    const auto gamma = affine(OpType::kMul);
    if (gamma) {
      inputs.push_back(reshaped_param(*gamma, norm_shape));
      if (const auto beta = affine(OpType::kAdd))
        inputs.push_back(reshaped_param(*beta, norm_shape));
    } else {
      inputs.push_back(ones(xt.dtype, norm_shape));
    }
    AttrMap attrs{{"axis", *axis}, {"epsilon", *eps}};
    replace(pattern, result, OpType::kLayerNorm, std::move(inputs), std::move(attrs),
            fused_name(pattern, g_.node(pattern.back()).name));
    return true;
  }

  // The same constant with leading 1-dimensions dropped (shared bytes).
  ValueId reshaped_param(ValueId v, const Shape& shape) {
    const Value& val = g_.value(v);
    if (val.type.shape == shape) return v;
    return g_.add_constant(val.name + ".reshaped", {val.type.dtype, shape}, val.constant);
  }

  ValueId ones(DType dtype, const Shape& shape) {
    const auto count = static_cast<size_t>(element_count(shape));
    const float f = 1.0f;
    std::vector<std::byte> bytes(count * dtype_size(dtype));
    // 1.0 in f32, f16, bf16 or f64: written per dtype.
    for (size_t i = 0; i < count; ++i) {
      switch (dtype) {
        case DType::kF32:
          std::memcpy(bytes.data() + 4 * i, &f, 4);
          break;
        case DType::kF64: {
          const double d = 1.0;
          std::memcpy(bytes.data() + 8 * i, &d, 8);
          break;
        }
        case DType::kF16: {
          const uint16_t h = 0x3c00;
          std::memcpy(bytes.data() + 2 * i, &h, 2);
          break;
        }
        default: {  // bf16
          const uint16_t h = 0x3f80;
          std::memcpy(bytes.data() + 2 * i, &h, 2);
          break;
        }
      }
    }
    return g_.add_constant("layer_norm.ones", {dtype, shape}, std::move(bytes));
  }

  bool fuse_gelu(NodeId erf) {
    const ValueId scaled = g_.node(erf).inputs[0];
    if (!single_use(scaled)) return false;
    std::optional<ValueId> x;
    NodeId pre = kNone;
    if (const auto div = producer(scaled, OpType::kDiv);
        div && near(scalar(g_.node(*div).inputs[1]), std::sqrt(2.0))) {
      x = g_.node(*div).inputs[0];
      pre = *div;
    } else if (const auto mul = producer(scaled, OpType::kMul)) {
      const auto& in = g_.node(*mul).inputs;
      if (near(scalar(in[1]), std::sqrt(0.5)))
        x = in[0];
      else if (near(scalar(in[0]), std::sqrt(0.5)))
        x = in[1];
      pre = *mul;
    }
    if (!x) return false;
    const ValueId e = g_.node(erf).outputs[0];
    const auto add = only_consumer(e, OpType::kAdd);
    if (!add || !near(scalar(*other_input(*add, e)), 1.0)) return false;
    const ValueId one_plus = g_.node(*add).outputs[0];
    const auto m = only_consumer(one_plus, OpType::kMul);
    if (!m) return false;
    const auto other = other_input(*m, one_plus);
    if (!other) return false;
    std::vector<NodeId> pattern{pre, erf, *add, *m};
    ValueId result = g_.node(*m).outputs[0];
    const auto half_mul_of = [&](ValueId v, ValueId want) -> std::optional<NodeId> {
      const auto p = single_use(v) ? producer(v, OpType::kMul) : std::nullopt;
      if (!p) return std::nullopt;
      const auto o = other_input(*p, want);
      return o && near(scalar(*o), 0.5) ? p : std::nullopt;
    };
    if (*other == *x) {  // (x * (1 + erf)) * 0.5
      const auto half = only_consumer(result, OpType::kMul);
      if (!half || !near(scalar(*other_input(*half, result)), 0.5)) return false;
      pattern.push_back(*half);
      result = g_.node(*half).outputs[0];
    } else if (const auto xh = half_mul_of(*other, *x)) {  // (x * 0.5) * (1 + erf)
      pattern.insert(pattern.begin(), *xh);
    } else if (near(scalar(*other), 0.5)) {  // x * ((1 + erf) * 0.5)
      const auto outer = only_consumer(result, OpType::kMul);
      if (!outer || other_input(*outer, result) != x) return false;
      pattern.push_back(*outer);
      result = g_.node(*outer).outputs[0];
    } else {
      return false;
    }
    if (!is_float(g_.value(*x).type.dtype) || g_.value(result).type != g_.value(*x).type)
      return false;
    replace(pattern, result, OpType::kGelu, {*x}, {}, fused_name(pattern, g_.node(erf).name));
    return true;
  }

  Graph& g_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<bool> output_;
  std::unordered_set<NodeId> taken_;
  std::unordered_set<std::string> names_;
};

}  // namespace

int fuse_decomposed_patterns(Graph& graph) {
  return PatternFuser(graph).run();
}

Graph remove_dead_nodes(const Graph& g) {
  Graph out;
  out.name = g.name;
  std::vector<ValueId> map(g.num_values(), kNone);
  for (ValueId v : g.inputs())
    map[static_cast<size_t>(v)] = out.add_input(g.value(v).name, g.value(v).type);

  // Post-order DFS from the outputs (iterative: graphs can be deep).
  std::vector<char> state(g.num_nodes(), 0);  // 0 new, 1 open, 2 emitted
  std::vector<NodeId> order;
  for (ValueId root : g.outputs()) {
    const NodeId r = g.value(root).producer;
    if (r == kNone || state[static_cast<size_t>(r)]) continue;
    std::vector<std::pair<NodeId, size_t>> stack{{r, 0}};
    state[static_cast<size_t>(r)] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const auto& ins = g.node(n).inputs;
      if (next < ins.size()) {
        const NodeId p = g.value(ins[next++]).producer;
        if (p != kNone && state[static_cast<size_t>(p)] == 0) {
          state[static_cast<size_t>(p)] = 1;
          stack.push_back({p, 0});
        } else if (p != kNone && state[static_cast<size_t>(p)] == 1) {
          throw GraphError("graph '" + g.name + "' has a cycle through node '" + g.node(p).name +
                           "'");
        }
      } else {
        state[static_cast<size_t>(n)] = 2;
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  out.reserve(order.size(), g.num_values());
  auto get = [&](ValueId v) {
    auto& m = map[static_cast<size_t>(v)];
    if (m == kNone) {
      const Value& val = g.value(v);
      if (!val.is_constant())
        throw GraphError("value '" + val.name + "' has no producer after rewriting");
      m = out.add_constant(val.name, val.type, val.constant);
    }
    return m;
  };
  for (NodeId id : order) {
    const Node& n = g.node(id);
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) ins.push_back(get(v));
    std::vector<TensorType> types;
    for (ValueId v : n.outputs) types.push_back(g.value(v).type);
    const NodeId nid = out.add_node(n.name, n.op, std::move(ins), std::move(types), n.attrs);
    out.node(nid).origin = n.origin;
    out.node(nid).keep_f32 = n.keep_f32;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const ValueId nv = out.node(nid).outputs[i];
      out.value(nv).name = g.value(n.outputs[i]).name;
      map[static_cast<size_t>(n.outputs[i])] = nv;
    }
  }
  for (ValueId v : g.outputs()) out.add_output(get(v));
  return out;
}

}  // namespace ampx::onnx_io
