#include <ampx/amp/node_desc.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/attr_access.hpp>

#include "conv_dead_taps.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <utility>

namespace ampx {

namespace {

// native > emulated > unsupported.
int rank_of(ampx_support s) {
  switch (s) {
    case AMPX_SUPPORT_NATIVE:
      return 2;
    case AMPX_SUPPORT_EMULATED:
      return 1;
    default:
      return 0;
  }
}

bool is_contraction(OpType op) {
  return op == OpType::kConv2d || op == OpType::kMatMul || op == OpType::kGemm;
}

std::vector<float> floats_of(const Value& v) {
  std::vector<float> out(v.constant->size() / sizeof(float));
  std::memcpy(out.data(), v.constant->data(), out.size() * sizeof(float));
  return out;
}

std::vector<std::byte> bytes_of(const std::vector<float>& f) {
  std::vector<std::byte> out(f.size() * sizeof(float));
  std::memcpy(out.data(), f.data(), out.size());
  return out;
}

class Fuser {
 public:
  // `caps[Node::device]` answers for a node; with one entry, for every node.
  Fuser(const Graph& planned, std::span<CapabilitySource* const> caps, const FusionOptions& options)
      : work_(planned), caps_(caps.begin(), caps.end()), options_(options) {
    const size_t nv = work_.num_values();
    uses_.assign(nv, 0);
    consumer_.assign(nv, kNone);
    consumers_.assign(nv, {});
    for (NodeId id = 0; id < static_cast<NodeId>(work_.num_nodes()); ++id) {
      for (ValueId v : work_.node(id).inputs) {
        ++uses_[static_cast<size_t>(v)];
        consumer_[static_cast<size_t>(v)] = id;
        auto& cs = consumers_[static_cast<size_t>(v)];
        if (cs.empty() || cs.back() != id) cs.push_back(id);
      }
    }
    for (ValueId v : work_.outputs()) uses_[static_cast<size_t>(v)] += 2;  // never absorbed
    constant_derived_.assign(nv, -1);
  }

  FusedGraph run() {
    const auto order = work_.topological_order();
    replaced_.resize(work_.num_nodes());
    absorbed_.assign(work_.num_nodes(), false);
    std::vector<FusedGroup> groups;
    for (NodeId id : order) {
      if (absorbed_[static_cast<size_t>(id)]) continue;
      const OpType op = work_.node(id).op;
      auto group = op == OpType::kConv2dGradWeight                  ? fuse_bias_gradient(id)
                   : is_contraction(op) || op == OpType::kBatchNorm ? fuse_from(id)
                                                                    : fuse_hardswish(id);
      if (group) groups.push_back(std::move(*group));
    }
    return {emit(order), std::move(groups)};
  }

 private:
  // The single consumer of v when v may be fused away, else kNone.
  NodeId sole_consumer(ValueId v) const {
    return uses_[static_cast<size_t>(v)] == 1 ? consumer_[static_cast<size_t>(v)] : kNone;
  }

  // Computable from weights alone (a constant, or a weight Cast of one).
  bool constant_derived(ValueId v) {
    int& memo = constant_derived_[static_cast<size_t>(v)];
    if (memo >= 0) return memo != 0;
    const Value& val = work_.value(v);
    bool result = val.is_constant();
    if (!result && val.producer != kNone) {
      const Node& p = work_.node(val.producer);
      result = !p.inputs.empty();
      for (ValueId in : p.inputs) result = result && constant_derived(in);
    }
    memo = result ? 1 : 0;
    return result;
  }

  ampx_support ask(const Node& node) {
    std::vector<DType> ins, outs;
    for (ValueId v : node.inputs) ins.push_back(work_.value(v).type.dtype);
    for (ValueId v : node.outputs) outs.push_back(work_.value(v).type.dtype);
    lowered_.assign(work_, node, ins, outs, false);
    return caps_[device_of(node)]->query(lowered_.desc()).support;
  }

  size_t device_of(const Node& n) const {
    return caps_.size() == 1 ? 0 : static_cast<size_t>(n.device);
  }

  // The single consumer of v, if v may be fused away and it runs on the
  // same device as `producer` (fusion never crosses a device boundary).
  NodeId sole_consumer_here(ValueId v, const Node& producer) const {
    const NodeId c = sole_consumer(v);
    if (c == kNone || device_of(work_.node(c)) != device_of(producer)) return kNone;
    // Already taken by another node (a residual Add both of whose operands
    // are convolutions goes to the first one visited).
    if (absorbed_[static_cast<size_t>(c)]) return kNone;
    return c;
  }

  std::optional<FusedGroup> fuse_from(NodeId id) {
    Node cand = work_.node(id);
    const int base = rank_of(ask(cand));
    if (base == 0) return std::nullopt;
    FusedGroup group{cand.name, {}};
    // Each step: take a candidate when the device answers it as well.
    auto accept = [&](Node next, std::initializer_list<NodeId> absorbed) {
      if (rank_of(ask(next)) < base) return false;
      cand = std::move(next);
      for (NodeId a : absorbed) {
        absorbed_[static_cast<size_t>(a)] = true;
        group.absorbed.push_back(work_.node(a).name);
      }
      return true;
    };
    const DType dt = work_.value(cand.outputs[0]).type.dtype;
    bool changed = false;
    if (cand.op == OpType::kConv2d) {
      if (auto padded = absorb_pad(cand, id)) accept(std::move(padded->first), {padded->second});
      if (auto cropped = crop_conv(cand)) changed = accept(std::move(*cropped), {});
    }

    if (options_.fold_batchnorm && cand.op == OpType::kConv2d && dt == DType::kF32) {
      const NodeId c = sole_consumer_here(cand.outputs[0], cand);
      if (c != kNone) {
        if (auto folded = fold_batchnorm(cand, c)) accept(std::move(*folded), {c});
      }
    }
    if (options_.epilogues && cand.op == OpType::kMatMul && cand.inputs.size() == 2) {
      const NodeId c = sole_consumer_here(cand.outputs[0], cand);
      if (c != kNone && work_.node(c).op == OpType::kAdd) {
        const Node& add = work_.node(c);
        const ValueId y = cand.outputs[0];
        const ValueId other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
        const TensorType& yt = work_.value(y).type;
        const TensorType& bt = work_.value(other).type;
        if (other != y && bt.dtype == dt && bt.shape == Shape{yt.shape.back()} &&
            work_.value(add.outputs[0]).type == yt && constant_derived(other)) {
          Node next = cand;
          next.inputs.push_back(other);
          next.outputs = add.outputs;
          accept(std::move(next), {c});
        }
      }
    }
    if (options_.epilogues && cand.op == OpType::kConv2d) {
      if (auto summed = absorb_residual(cand)) accept(std::move(summed->first), {summed->second});
    }
    if (options_.epilogues && attr_string(cand.attrs, "activation", "none") == "none")
      fuse_activation(cand, dt, accept);
    if (group.absorbed.empty() && !changed) return std::nullopt;
    replaced_[static_cast<size_t>(id)] = std::move(cand);
    if (group.absorbed.empty()) return std::nullopt;  // only cropped: nothing fused
    return group;
  }

  // The epilogue a single unary node applies, if it is one (docs/OPS.md).
  static std::optional<AttrMap> activation_of(const Node& act) {
    auto with = [](std::string name) {
      AttrMap a;
      a["activation"] = std::move(name);
      return a;
    };
    switch (act.op) {
      case OpType::kRelu:
        return with("relu");
      case OpType::kGelu:
        return with(attr_string(act.attrs, "approximate", "none") == "tanh" ? "gelu_tanh" : "gelu");
      case OpType::kSigmoid:
        return with("sigmoid");
      case OpType::kTanh:
        return with("tanh");
      case OpType::kHardSwish:
        return with("hardswish");
      case OpType::kClip: {
        AttrMap a = with("clip");
        if (act.attrs.contains("min")) a["activation_alpha"] = attr_float(act.attrs, "min", 0);
        if (act.attrs.contains("max")) a["activation_beta"] = attr_float(act.attrs, "max", 0);
        return a;
      }
      case OpType::kHardSigmoid: {
        AttrMap a = with("hardsigmoid");
        a["activation_alpha"] = attr_float(act.attrs, "alpha", 0.2);
        a["activation_beta"] = attr_float(act.attrs, "beta", 0.5);
        return a;
      }
      case OpType::kLeakyRelu: {
        AttrMap a = with("leaky_relu");
        a["activation_alpha"] = attr_float(act.attrs, "alpha", 0.01);
        return a;
      }
      default:
        return std::nullopt;
    }
  }

  // HardSigmoid(x; 1/6, 1/2), the gate of x · HardSigmoid(x) = HardSwish(x)
  // as opset-13 exporters write it.
  static bool is_hardswish_gate(const Node& n) {
    return n.op == OpType::kHardSigmoid &&
           std::abs(attr_float(n.attrs, "alpha", 0.2) - 1.0 / 6.0) < 1e-6 &&
           std::abs(attr_float(n.attrs, "beta", 0.5) - 0.5) < 1e-7;
  }

  // `mul` is Mul(x, gate) or Mul(gate, x) with gate = gate_node's output.
  bool is_gated_product(const Node& mul, ValueId x, const Node& gate_node) const {
    if (mul.op != OpType::kMul || mul.inputs.size() != 2) return false;
    const ValueId g = gate_node.outputs[0];
    return (mul.inputs[0] == x && mul.inputs[1] == g) || (mul.inputs[0] == g && mul.inputs[1] == x);
  }

  struct GatedActivation {
    std::string name;  // swish or hardswish
    NodeId gate, product;
  };
  // x · Sigmoid(x) (swish, SiLU) or x · HardSigmoid(x; 1/6, 1/2) (hardswish)
  // where x is used by exactly those two nodes: the gate and the product
  // both go into the epilogue of x's producer `p`.
  std::optional<GatedActivation> gated_activation(ValueId x, const Node& p) const {
    if (uses_[static_cast<size_t>(x)] != 2) return std::nullopt;
    const auto& cs = consumers_[static_cast<size_t>(x)];
    if (cs.size() != 2) return std::nullopt;
    for (size_t k = 0; k < 2; ++k) {
      const NodeId gate = cs[k], product = cs[1 - k];
      const Node& g = work_.node(gate);
      if (g.inputs.size() != 1 || g.inputs[0] != x) continue;
      if (g.op != OpType::kSigmoid && !is_hardswish_gate(g)) continue;
      if (sole_consumer(g.outputs[0]) != product || !is_gated_product(work_.node(product), x, g))
        continue;
      if (device_of(g) != device_of(p) || device_of(work_.node(product)) != device_of(p)) continue;
      return GatedActivation{g.op == OpType::kSigmoid ? "swish" : "hardswish", gate, product};
    }
    return std::nullopt;
  }

  template <class Accept>
  void fuse_activation(const Node& cand, DType dt, Accept& accept) {
    const ValueId y = cand.outputs[0];
    if (auto gated = gated_activation(y, cand)) {
      const Node& m = work_.node(gated->product);
      if (work_.value(m.outputs[0]).type.dtype == dt &&
          work_.value(work_.node(gated->gate).outputs[0]).type.dtype == dt) {
        Node next = cand;
        next.attrs["activation"] = gated->name;
        next.outputs = m.outputs;
        accept(std::move(next), {gated->gate, gated->product});
      }
      return;
    }
    const NodeId c = sole_consumer_here(y, cand);
    if (c == kNone) return;
    const Node& act = work_.node(c);
    auto attrs = activation_of(act);
    if (!attrs || act.inputs.size() != 1 || work_.value(act.outputs[0]).type.dtype != dt) return;
    Node next = cand;
    for (auto& [k, v] : *attrs) next.attrs[k] = v;
    next.outputs = act.outputs;
    accept(std::move(next), {c});
  }

  // A HardSigmoid(x; 1/6, 1/2) whose only consumer is Mul(x, it), not
  // absorbed into a producer's epilogue: one HardSwish node instead of two.
  std::optional<FusedGroup> fuse_hardswish(NodeId id) {
    const Node& g = work_.node(id);
    if (!options_.epilogues || !is_hardswish_gate(g) || g.inputs.size() != 1) return std::nullopt;
    const ValueId x = g.inputs[0];
    const NodeId mul = sole_consumer_here(g.outputs[0], g);
    if (mul == kNone || !is_gated_product(work_.node(mul), x, g)) return std::nullopt;
    const Node& m = work_.node(mul);
    const DType dt = work_.value(x).type.dtype;
    if (work_.value(g.outputs[0]).type.dtype != dt || work_.value(m.outputs[0]).type.dtype != dt)
      return std::nullopt;
    Node next = g;
    next.op = OpType::kHardSwish;
    next.attrs.clear();
    next.outputs = m.outputs;
    const int base = rank_of(ask(g));
    if (base == 0 || rank_of(ask(next)) < base) return std::nullopt;
    absorbed_[static_cast<size_t>(mul)] = true;
    replaced_[static_cast<size_t>(id)] = std::move(next);
    return FusedGroup{g.name, {m.name}};
  }

  // Autodiff's gradients of a biased convolution (grad_rules_nn.cpp) read
  // the same dY: Conv2dGradWeight(dY, X) and ReduceSum(dY, axes {0, 2, 3},
  // keepdims 0). The sum becomes the weight gradient's second output
  // (bias_gradient, docs/OPS.md): the backward-weights primitive sums dY in
  // the pass that reads it for dW. The sum must give dY's dtype and [M] on
  // the same device; a Cast between them (dY 16-bit, the black-listed
  // ReduceSum f32) means another dY, and nothing is fused. A dense layer's
  // bias gradient stays a ReduceSum (backends/onednn/README.md says why).
  std::optional<FusedGroup> fuse_bias_gradient(NodeId id) {
    const Node& gw = work_.node(id);
    if (!options_.bias_gradients || gw.outputs.size() != 1 || gw.inputs.size() != 2)
      return std::nullopt;
    const ValueId dy = gw.inputs[0];
    const TensorType& dyt = work_.value(dy).type;
    if (dyt.shape.size() != 4) return std::nullopt;
    const TensorType want{dyt.dtype, {dyt.shape[1]}};
    NodeId reduce = kNone;
    for (NodeId c : consumers_[static_cast<size_t>(dy)]) {
      const Node& r = work_.node(c);
      if (r.op != OpType::kReduceSum || r.inputs.size() != 1 || absorbed_[static_cast<size_t>(c)] ||
          device_of(r) != device_of(gw) || attr_int(r.attrs, "keepdims", 1) != 0 ||
          work_.value(r.outputs[0]).type != want)
        continue;
      std::vector<int64_t> axes = attr_ints(r.attrs, "axes", {});
      for (int64_t& a : axes)
        if (a < 0) a += 4;
      std::sort(axes.begin(), axes.end());
      if (axes == std::vector<int64_t>{0, 2, 3}) {
        reduce = c;
        break;
      }
    }
    // X computed from dB (not in an autodiff graph, but a graph may say so)
    // would make the fused node its own producer.
    if (reduce == kNone || depends_on(gw.inputs[1], reduce)) return std::nullopt;
    const int base = rank_of(ask(gw));
    Node next = gw;
    next.attrs["bias_gradient"] = int64_t{1};
    next.outputs.push_back(work_.node(reduce).outputs[0]);
    if (base == 0 || rank_of(ask(next)) < base) return std::nullopt;
    absorbed_[static_cast<size_t>(reduce)] = true;
    spdlog::debug("fusion: {}: the bias gradient {} comes from the weight gradient's kernel",
                  gw.name, work_.node(reduce).name);
    FusedGroup group{gw.name, {work_.node(reduce).name}};
    replaced_[static_cast<size_t>(id)] = std::move(next);
    return group;
  }

  // Whether computing v needs node n.
  bool depends_on(ValueId v, NodeId n) const {
    std::vector<bool> seen(work_.num_nodes(), false);
    std::vector<ValueId> todo{v};
    while (!todo.empty()) {
      const NodeId p = work_.value(todo.back()).producer;
      todo.pop_back();
      if (p == kNone || seen[static_cast<size_t>(p)]) continue;
      if (p == n) return true;
      seen[static_cast<size_t>(p)] = true;
      for (ValueId in : work_.node(p).inputs) todo.push_back(in);
    }
    return false;
  }

  // Pad (constant zeros, spatial dimensions only) -> Conv2d, the Pad's only
  // consumer: the padding goes into the convolution's own, which pads
  // without a copy of the input. Returns the convolution and the Pad.
  std::optional<std::pair<Node, NodeId>> absorb_pad(const Node& conv, NodeId id) {
    const NodeId pid = work_.value(conv.inputs[0]).producer;
    if (pid == kNone || absorbed_[static_cast<size_t>(pid)]) return std::nullopt;
    const Node& pad = work_.node(pid);
    if (pad.op != OpType::kPad || sole_consumer_here(pad.outputs[0], pad) != id)
      return std::nullopt;
    if (attr_string(pad.attrs, "mode", "constant") != "constant" ||
        attr_float(pad.attrs, "value", 0.0) != 0.0)
      return std::nullopt;
    const auto p = attr_ints(pad.attrs, "pads", {});
    if (p.size() != 8 || p[0] || p[1] || p[4] || p[5]) return std::nullopt;  // N, C untouched
    for (int64_t v : p)
      if (v < 0) return std::nullopt;  // a crop is not a pad
    auto cp = attr_ints(conv.attrs, "pads", {0, 0, 0, 0});
    if (cp.size() != 4) return std::nullopt;
    Node next = conv;
    next.inputs[0] = pad.inputs[0];
    next.attrs["pads"] =
        std::vector<int64_t>{cp[0] + p[2], cp[1] + p[3], cp[2] + p[6], cp[3] + p[7]};
    return std::make_pair(std::move(next), pid);
  }

  // Conv2d -> Add(y, z) of a residual z of y's type: z becomes the
  // convolution's input 3, added before the activation (ResNet's
  // conv -> BatchNorm -> Add -> Relu as one kernel; a missing bias becomes
  // zeros, so that the residual is always input 3). Returns the
  // convolution and the Add.
  std::optional<std::pair<Node, NodeId>> absorb_residual(const Node& conv) {
    if (conv.inputs.size() > 3 || attr_string(conv.attrs, "activation", "none") != "none")
      return std::nullopt;
    const ValueId y = conv.outputs[0];
    const NodeId c = sole_consumer_here(y, conv);
    if (c == kNone) return std::nullopt;
    const Node& add = work_.node(c);
    if (add.op != OpType::kAdd || add.inputs.size() != 2) return std::nullopt;
    const ValueId z = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
    const TensorType yt = work_.value(y).type;  // a copy: add_constant() may move values
    if (z == y || work_.value(z).type != yt || work_.value(add.outputs[0]).type != yt)
      return std::nullopt;
    Node next = conv;
    if (next.inputs.size() == 2) {
      const int64_t m = work_.value(conv.inputs[1]).type.shape[0];
      const TensorType bt{yt.dtype, {m}};
      next.inputs.push_back(work_.add_constant(
          conv.name + ".zero_bias", bt,
          std::vector<std::byte>(static_cast<size_t>(m) * dtype_size(yt.dtype))));
      uses_.resize(work_.num_values(), 1);
      consumer_.resize(work_.num_values(), kNone);
      consumers_.resize(work_.num_values());
      constant_derived_.resize(work_.num_values(), 1);
    }
    next.inputs.push_back(z);
    next.outputs = add.outputs;
    return std::make_pair(std::move(next), c);
  }

  // The convolution with its dead edge taps cropped (conv_dead_taps.hpp),
  // when its weight is a constant.
  std::optional<Node> crop_conv(const Node& conv) {
    const Value& wv = work_.value(conv.inputs[1]);
    if (!wv.is_constant()) return std::nullopt;
    // Copies: add_constant() below may move every value.
    const Shape ws = wv.type.shape;
    const DType wdt = wv.type.dtype;
    const ConstantData wdata = wv.constant;
    auto crop = crop_dead_taps(work_.value(conv.inputs[0]).type.shape, ws, conv.attrs);
    if (!crop) return std::nullopt;
    const int64_t kh = crop->h.last - crop->h.first + 1, kw = crop->w.last - crop->w.first + 1;
    const size_t es = dtype_size(wdt);
    const std::byte* src = reinterpret_cast<const std::byte*>(wdata->data());
    std::vector<std::byte> bytes(static_cast<size_t>(ws[0] * ws[1] * kh * kw) * es);
    std::byte* dst = bytes.data();
    for (int64_t oc = 0; oc < ws[0] * ws[1]; ++oc)
      for (int64_t r = 0; r < kh; ++r) {
        const int64_t from = (oc * ws[2] + crop->h.first + r) * ws[3] + crop->w.first;
        std::memcpy(dst, src + static_cast<size_t>(from) * es, static_cast<size_t>(kw) * es);
        dst += static_cast<size_t>(kw) * es;
      }
    const TensorType wt{wdt, {ws[0], ws[1], kh, kw}};
    const ValueId nw = work_.add_constant(conv.name + ".live_taps", wt, std::move(bytes));
    uses_.resize(work_.num_values(), 1);
    consumer_.resize(work_.num_values(), kNone);
    consumers_.resize(work_.num_values());
    constant_derived_.resize(work_.num_values(), 1);
    spdlog::debug("fusion: {}: kernel {}x{} cropped to its live taps {}x{}", conv.name, ws[2],
                  ws[3], kh, kw);
    Node next = conv;
    next.inputs[1] = nw;
    next.attrs = std::move(crop->attrs);
    return next;
  }

  // conv (f32, constant weight/bias) -> BatchNorm (f32, constant params):
  // W'[m] = W[m]·s[m], b'[m] = (b[m] − mean[m])·s[m] + beta[m], with
  // s = gamma / sqrt(var + eps). Computed in double, stored f32.
  std::optional<Node> fold_batchnorm(const Node& conv, NodeId bn_id) {
    const Node& bn = work_.node(bn_id);
    if (bn.op != OpType::kBatchNorm || bn.inputs[0] != conv.outputs[0]) return std::nullopt;
    if (attr_string(conv.attrs, "activation", "none") != "none") return std::nullopt;
    for (size_t i = 1; i < conv.inputs.size(); ++i)
      if (!work_.value(conv.inputs[i]).is_constant()) return std::nullopt;
    for (size_t i = 1; i < 5; ++i)
      if (!work_.value(bn.inputs[i]).is_constant()) return std::nullopt;
    if (work_.value(bn.outputs[0]).type.dtype != DType::kF32) return std::nullopt;

    const Value& wv = work_.value(conv.inputs[1]);
    const std::vector<float> w = floats_of(wv);
    const std::vector<float> gamma = floats_of(work_.value(bn.inputs[1]));
    const std::vector<float> beta = floats_of(work_.value(bn.inputs[2]));
    const std::vector<float> mean = floats_of(work_.value(bn.inputs[3]));
    const std::vector<float> var = floats_of(work_.value(bn.inputs[4]));
    const size_t m = gamma.size();
    std::vector<float> b = conv.inputs.size() > 2 ? floats_of(work_.value(conv.inputs[2]))
                                                  : std::vector<float>(m, 0.0f);
    if (m == 0 || w.size() % m != 0 || b.size() != m) return std::nullopt;
    const double eps = attr_float(bn.attrs, "epsilon", 1e-5);
    const size_t per = w.size() / m;
    std::vector<float> w2(w.size()), b2(m);
    for (size_t o = 0; o < m; ++o) {
      const double s = gamma[o] / std::sqrt(static_cast<double>(var[o]) + eps);
      for (size_t i = 0; i < per; ++i) w2[o * per + i] = static_cast<float>(w[o * per + i] * s);
      b2[o] = static_cast<float>((b[o] - static_cast<double>(mean[o])) * s + beta[o]);
    }
    const TensorType wt = wv.type;
    const ValueId nw = work_.add_constant(conv.name + ".folded_weight", wt, bytes_of(w2));
    const ValueId nb =
        work_.add_constant(conv.name + ".folded_bias",
                           TensorType{DType::kF32, {static_cast<int64_t>(m)}}, bytes_of(b2));
    uses_.resize(work_.num_values(), 1);
    consumer_.resize(work_.num_values(), kNone);
    consumers_.resize(work_.num_values());
    constant_derived_.resize(work_.num_values(), 1);
    Node next = conv;
    next.inputs = {conv.inputs[0], nw, nb};
    next.outputs = bn.outputs;
    return next;
  }

  Graph emit(const std::vector<NodeId>& order) {
    Graph out;
    out.name = work_.name;
    out.reserve(work_.num_nodes(), work_.num_values());
    std::vector<ValueId> map(work_.num_values(), kNone);
    for (ValueId v : work_.inputs())
      map[static_cast<size_t>(v)] = out.add_input(work_.value(v).name, work_.value(v).type);
    auto get = [&](ValueId v) {
      ValueId& m = map[static_cast<size_t>(v)];
      if (m == kNone) {
        const Value& val = work_.value(v);
        if (!val.is_constant())
          throw GraphError("fusion: value '" + val.name + "' is used before it is produced");
        m = out.add_constant(val.name, val.type, val.constant);
      }
      return m;
    };
    // A fused node may take an input whose producer comes later in the
    // source order (the weight Cast of an absorbed Add's bias, a residual
    // computed after the convolution that takes it): producers are emitted
    // first, on demand. The producer of a value is the fused node that now
    // writes it (an absorbed node's output belongs to its absorber).
    std::vector<NodeId> producer(work_.num_values(), kNone);
    for (NodeId id : order) {
      if (absorbed_[static_cast<size_t>(id)]) continue;
      const auto& r = replaced_[static_cast<size_t>(id)];
      for (ValueId v : (r ? *r : work_.node(id)).outputs) producer[static_cast<size_t>(v)] = id;
    }
    std::vector<bool> emitted(work_.num_nodes(), false);
    std::function<void(NodeId)> emit_node = [&](NodeId id) {
      if (emitted[static_cast<size_t>(id)]) return;
      emitted[static_cast<size_t>(id)] = true;
      const auto& r = replaced_[static_cast<size_t>(id)];
      const Node& n = r ? *r : work_.node(id);
      std::vector<ValueId> ins;
      for (ValueId v : n.inputs) {
        const NodeId p = producer[static_cast<size_t>(v)];
        if (map[static_cast<size_t>(v)] == kNone && p != kNone) emit_node(p);
        ins.push_back(get(v));
      }
      std::vector<TensorType> types;
      for (ValueId v : n.outputs) types.push_back(work_.value(v).type);
      const NodeId nid = out.add_node(n.name, n.op, std::move(ins), std::move(types), n.attrs);
      out.node(nid).origin = n.origin;
      out.node(nid).grad_of = n.grad_of;
      out.node(nid).keep_f32 = n.keep_f32;
      out.node(nid).device = n.device;
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        const ValueId nv = out.node(nid).outputs[i];
        out.value(nv).name = work_.value(n.outputs[i]).name;
        map[static_cast<size_t>(n.outputs[i])] = nv;
      }
    };
    for (NodeId id : order)
      if (!absorbed_[static_cast<size_t>(id)]) emit_node(id);
    for (ValueId v : work_.outputs()) out.add_output(get(v));
    return out;
  }

  Graph work_;
  std::vector<CapabilitySource*> caps_;
  FusionOptions options_;
  std::vector<int> uses_;
  std::vector<NodeId> consumer_;
  std::vector<std::vector<NodeId>> consumers_;  // distinct consumers of each value
  std::vector<int> constant_derived_;           // -1 unknown, 0 no, 1 yes
  std::vector<std::optional<Node>> replaced_;
  std::vector<bool> absorbed_;
  LoweredNode lowered_;
};

}  // namespace

int FusedGraph::absorbed_nodes() const {
  int n = 0;
  for (const auto& g : groups) n += static_cast<int>(g.absorbed.size());
  return n;
}

FusedGraph fuse_for_device(const Graph& planned, CapabilitySource& caps,
                           const FusionOptions& options) {
  CapabilitySource* one[] = {&caps};
  FusedGraph fused = Fuser(planned, one, options).run();
  spdlog::debug("fusion for {}: {} nodes absorbed into {}", caps.device_id(),
                fused.absorbed_nodes(), fused.groups.size());
  return fused;
}

FusedGraph fuse_placed(const Graph& planned, std::span<CapabilitySource* const> devices,
                       const FusionOptions& options) {
  if (devices.empty()) throw std::invalid_argument("fusion: no device");
  for (const Node& n : planned.nodes())
    if (n.device < 0 || static_cast<size_t>(n.device) >= devices.size())
      throw std::invalid_argument("fusion: node '" + n.name + "' is placed on device " +
                                  std::to_string(n.device) + " of " +
                                  std::to_string(devices.size()));
  FusedGraph fused = Fuser(planned, devices, options).run();
  spdlog::debug("fusion on {} devices: {} nodes absorbed into {}", devices.size(),
                fused.absorbed_nodes(), fused.groups.size());
  return fused;
}

}  // namespace ampx
