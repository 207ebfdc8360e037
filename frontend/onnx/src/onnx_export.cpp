// IR graph -> ONNX opset 17, the reverse of onnx_ops.cpp's import table.
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/half.hpp>
#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/shape_inference.hpp>
#include <ampx/onnx/onnx_export.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <unordered_set>

#include "constant_folding.hpp"
#include "model_metadata.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

constexpr int64_t kOpset = 17;
constexpr int64_t kIrVersion = 8;  // the IR version of opset 17 (ONNX 1.12)

// One line: checker and shape-inference messages span several.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// `value` as one element of `dtype`, little-endian.
std::vector<std::byte> scalar_bytes(DType dtype, double value) {
  std::vector<std::byte> b(dtype_size(dtype));
  auto put = [&](auto v) { std::memcpy(b.data(), &v, sizeof v); };
  switch (dtype) {
    case DType::kF32:
      put(static_cast<float>(value));
      break;
    case DType::kF16:
      put(float_to_f16_bits(static_cast<float>(value)));
      break;
    case DType::kBF16:
      put(float_to_bf16_bits(static_cast<float>(value)));
      break;
    case DType::kF64:
      put(value);
      break;
    case DType::kI64:
      put(static_cast<int64_t>(value));
      break;
    case DType::kI32:
      put(static_cast<int32_t>(value));
      break;
    case DType::kI8:
      put(static_cast<int8_t>(value));
      break;
    case DType::kU8:
    case DType::kBool:
      put(static_cast<uint8_t>(value));
      break;
    case DType::kI16:
      put(static_cast<int16_t>(value));
      break;
    case DType::kU16:
      put(static_cast<uint16_t>(value));
      break;
    case DType::kU32:
      put(static_cast<uint32_t>(value));
      break;
    case DType::kU64:
      put(static_cast<uint64_t>(value));
      break;
    case DType::kInvalid:
      throw OnnxError("export: a constant of invalid dtype");
  }
  return b;
}

class Exporter {
 public:
  Exporter(const Graph& g, const ExportOptions& options) : g_(g), options_(options) {}

  std::string run(ExportStats* stats) {
    model_.set_ir_version(kIrVersion);
    model_.set_producer_name("ampx");
    model_.set_producer_version(options_.producer_version);
    if (!options_.doc.empty()) model_.set_doc_string(options_.doc);
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    gp_ = model_.mutable_graph();
    gp_->set_name(g_.name.empty() ? "ampx" : g_.name);

    name_values();
    if (!options_.batch_dim.empty()) find_batch_dims();
    constant_.resize(g_.num_values());
    initialized_.assign(g_.num_values(), false);
    for (size_t v = 0; v < g_.num_values(); ++v) constant_[v] = g_.values()[v].constant;

    for (ValueId v : g_.inputs()) value_info(gp_->add_input(), v);
    for (NodeId id : g_.topological_order()) {
      node_ = &g_.node(id);
      if (all_inputs_constant(*node_))
        fold(*node_);
      else
        emit(*node_);
    }
    node_ = nullptr;
    for (ValueId v : g_.outputs()) {
      if (constant_[static_cast<size_t>(v)]) initializer(v);
      value_info(gp_->add_output(), v);
    }
    // Intermediate types as ampx inferred them: strict shape inference
    // below then checks every op's output against ONNX's own rules.
    std::unordered_set<ValueId> io(g_.inputs().begin(), g_.inputs().end());
    io.insert(g_.outputs().begin(), g_.outputs().end());
    for (const Node& n : g_.nodes())
      for (ValueId v : n.outputs)
        if (!io.contains(v) && !constant_[static_cast<size_t>(v)])
          value_info(gp_->add_value_info(), v);

    write_keep_f32_nodes();
    check();
    std::string bytes;
    if (model_.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      throw OnnxError(
          "export: the model is over 2 GiB, more than one protobuf file holds "
          "(external data is not written)");
    if (!model_.SerializeToString(&bytes)) throw OnnxError("export: serialising the model failed");
    st_.model_bytes = static_cast<int64_t>(bytes.size());
    for (const auto& n : gp_->node()) {
      ++st_.nodes;
      if (n.op_type() == "Cast") ++st_.casts;
    }
    if (stats) *stats = st_;
    return bytes;
  }

 private:
  // --- names -----------------------------------------------------------------

  // Graph outputs (under ExportOptions::output_names) and inputs keep
  // their names exactly (first come); any other value keeps its name
  // unless empty or taken.
  void name_values() {
    names_.assign(g_.num_values(), {});
    auto assign = [&](ValueId v, const std::string& want) {
      std::string& n = names_[static_cast<size_t>(v)];
      if (!n.empty()) return;
      n = unique(want.empty() ? "v" + std::to_string(v) : want);
    };
    const auto& renamed = options_.output_names;
    if (!renamed.empty() && renamed.size() != g_.outputs().size())
      fail(
          fmt::format("{} output names for {} graph outputs", renamed.size(), g_.outputs().size()));
    for (size_t i = 0; i < g_.outputs().size(); ++i)
      assign(g_.outputs()[i], renamed.empty() ? g_.value(g_.outputs()[i]).name : renamed[i]);
    for (ValueId v : g_.inputs()) assign(v, g_.value(v).name);
    for (size_t v = 0; v < g_.num_values(); ++v)
      assign(static_cast<ValueId>(v), g_.values()[v].name);
  }

  std::string unique(const std::string& base) {
    if (taken_.insert(base).second) return base;
    for (int k = 1;; ++k) {
      std::string s = fmt::format("{}_{}", base, k);
      if (taken_.insert(s).second) return s;
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    if (node_)
      throw OnnxError(
          fmt::format("export: node '{}' ({}): {}", node_->name, op_name(node_->op), what));
    throw OnnxError("export: " + what);
  }

  // --- values and initializers ---------------------------------------------

  void value_info(onnx::ValueInfoProto* vi, ValueId v) {
    const Value& val = g_.value(v);
    vi->set_name(names_[static_cast<size_t>(v)]);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_elem_type(val.type.dtype));
    auto* shape = tt->mutable_shape();
    const Shape* other = rebatched_.empty() ? nullptr : &rebatched_[static_cast<size_t>(v)];
    for (size_t k = 0; k < val.type.shape.size(); ++k) {
      const int64_t d = val.type.shape[k];
      auto* dim = shape->add_dim();
      if (!other || other->at(k) == d)
        dim->set_dim_value(d);
      else if (d == batch_)
        dim->set_dim_param(options_.batch_dim);
      // else: a dimension derived from the batch (B * C after a Reshape):
      // left unknown.
    }
  }

  // The types again at batch + 1 (ExportOptions::batch_dim): every
  // dimension that changes depends on the batch.
  void find_batch_dims() {
    if (g_.inputs().empty()) fail("batch_dim: the graph has no inputs");
    for (ValueId v : g_.inputs())
      if (g_.value(v).type.shape.empty())
        fail("batch_dim: input '" + g_.value(v).name + "' is a scalar: it has no batch dimension");
    batch_ = g_.value(g_.inputs()[0]).type.shape[0];
    rebatched_.resize(g_.num_values());
    for (size_t v = 0; v < g_.num_values(); ++v) rebatched_[v] = g_.values()[v].type.shape;
    for (ValueId v : g_.inputs()) rebatched_[static_cast<size_t>(v)][0] = batch_ + 1;
    for (NodeId id : g_.topological_order()) {
      const Node& n = g_.node(id);
      std::vector<TensorType> types;
      for (ValueId v : n.inputs)
        types.push_back({g_.value(v).type.dtype, rebatched_[static_cast<size_t>(v)]});
      std::vector<TensorType> out;
      try {
        out = infer_output_types(n.op, types, n.attrs, n.name);
      } catch (const GraphError& e) {
        throw OnnxError(fmt::format("export: the model fixes its batch size ({})", e.what()));
      }
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        if (out[k].shape.size() != g_.value(n.outputs[k]).type.shape.size())
          throw OnnxError(
              fmt::format("export: node '{}' ({}): its output's rank depends on the batch size",
                          n.name, op_name(n.op)));
        rebatched_[static_cast<size_t>(n.outputs[k])] = out[k].shape;
      }
    }
  }

  void add_initializer(const std::string& name, DType dtype, const Shape& shape,
                       std::span<const std::byte> bytes) {
    write_tensor(*gp_->add_initializer(), name, dtype, shape, bytes);
    ++st_.initializers;
    st_.initializer_bytes += static_cast<int64_t>(bytes.size());
    if (is_16bit_float(dtype)) {
      ++st_.initializers_16bit;
      st_.initializer_16bit_bytes += static_cast<int64_t>(bytes.size());
    }
  }

  // A constant value's initializer, written once, when a node uses it: an
  // f32 master copy that only fed a folded Cast is not written at all.
  void initializer(ValueId v) {
    const auto i = static_cast<size_t>(v);
    if (initialized_[i]) return;
    initialized_[i] = true;
    const Value& val = g_.value(v);
    add_initializer(names_[i], val.type.dtype, val.type.shape, *constant_[i]);
  }

  // The ONNX name of an input value.
  std::string in(ValueId v) {
    if (constant_[static_cast<size_t>(v)]) initializer(v);
    return names_[static_cast<size_t>(v)];
  }
  const std::string& out(ValueId v) const { return names_[static_cast<size_t>(v)]; }

  std::string const_i64(const std::string& base, const std::vector<int64_t>& values) {
    const std::string name = unique(base);
    std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
    // An empty list (a Reshape to a scalar) has no data pointer to copy from.
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    add_initializer(name, DType::kI64, Shape{static_cast<int64_t>(values.size())}, bytes);
    return name;
  }
  std::string const_f32(const std::string& base, const std::vector<double>& values) {
    const std::string name = unique(base);
    std::vector<std::byte> bytes(values.size() * sizeof(float));
    for (size_t k = 0; k < values.size(); ++k) {
      const auto v = static_cast<float>(values[k]);
      std::memcpy(bytes.data() + k * sizeof(float), &v, sizeof(float));
    }
    add_initializer(name, DType::kF32, Shape{static_cast<int64_t>(values.size())}, bytes);
    return name;
  }
  std::string const_scalar(const std::string& base, DType dtype, double value) {
    const std::string name = unique(base);
    add_initializer(name, dtype, Shape{}, scalar_bytes(dtype, value));
    return name;
  }

  bool all_inputs_constant(const Node& n) const {
    if (n.inputs.empty()) return false;
    for (ValueId v : n.inputs)
      if (!constant_[static_cast<size_t>(v)]) return false;
    return true;
  }

  // A node of constants (the plan's weight Casts) computed here by the
  // reference kernels, as the executor does at load: its outputs become
  // initializers in their converted dtype.
  void fold(const Node& n) {
    std::vector<ConstantInput> ins;
    for (ValueId v : n.inputs) ins.push_back({g_.value(v).type, constant_[static_cast<size_t>(v)]});
    std::vector<TensorType> outs;
    for (ValueId v : n.outputs) outs.push_back(g_.value(v).type);
    std::vector<std::vector<std::byte>> results;
    try {
      results = evaluate_constant_node(n.op, n.attrs, ins, outs, n.name);
    } catch (const std::exception& e) {
      fail(std::string("cannot fold it: ") + e.what());
    }
    for (size_t i = 0; i < n.outputs.size(); ++i)
      constant_[static_cast<size_t>(n.outputs[i])] =
          std::make_shared<const std::vector<std::byte>>(std::move(results[i]));
    if (n.op == OpType::kCast) ++st_.folded_casts;
  }

  // --- nodes -------------------------------------------------------------------

  onnx::NodeProto* add(const std::string& op_type, std::vector<std::string> inputs,
                       std::vector<std::string> outputs) {
    // Optional inputs left out at the end are dropped, not written as "".
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    auto* p = gp_->add_node();
    p->set_op_type(op_type);
    // The first ONNX node of an IR node carries its name; helpers get
    // "name/Op".
    p->set_name(first_ ? unique_node(node_->name) : unique_node(node_->name + "/" + op_type));
    first_ = false;
    if (node_->keep_f32) keep_f32_nodes_.push_back(p->name());
    for (auto& s : inputs) p->add_input(s);
    for (auto& s : outputs) p->add_output(s);
    for (ValueId v : node_->outputs)
      if (is_16bit_float(g_.value(v).type.dtype) && op_type != "Cast") {
        ++st_.nodes_16bit;
        break;
      }
    return p;
  }
  // model_metadata.hpp: the planner's integer-exact marks, for a re-import.
  void write_keep_f32_nodes() {
    if (keep_f32_nodes_.empty()) return;
    auto* prop = model_.add_metadata_props();
    prop->set_key(std::string(kKeepF32NodesKey));
    prop->set_value(fmt::format("{}", fmt::join(keep_f32_nodes_, "\n")));
  }
  std::string unique_node(const std::string& base) {
    if (node_names_.insert(base).second) return base;
    for (int k = 1;; ++k) {
      std::string s = fmt::format("{}_{}", base, k);
      if (node_names_.insert(s).second) return s;
    }
  }
  std::string tmp(const std::string& what) { return unique(node_->name + "/" + what); }

  static void set_int(onnx::NodeProto* p, const char* name, int64_t v) {
    auto* a = p->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void set_float(onnx::NodeProto* p, const char* name, double v) {
    auto* a = p->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(v));
  }
  static void set_ints(onnx::NodeProto* p, const char* name, const std::vector<int64_t>& v) {
    auto* a = p->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void set_floats(onnx::NodeProto* p, const char* name, const std::vector<double>& v) {
    auto* a = p->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (double x : v) a->add_floats(static_cast<float>(x));
  }
  static void set_strings(onnx::NodeProto* p, const char* name, const std::string& joined) {
    auto* a = p->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRINGS);
    size_t start = 0;
    for (size_t comma; (comma = joined.find(',', start)) != std::string::npos; start = comma + 1)
      a->add_strings(joined.substr(start, comma - start));
    a->add_strings(joined.substr(start));
  }
  static void set_string(onnx::NodeProto* p, const char* name, const std::string& v) {
    auto* a = p->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  const AttrMap& attrs() const { return node_->attrs; }
  bool has(const char* name) const { return attrs().contains(name); }
  int64_t i(const char* name, int64_t def) const { return attr_int(attrs(), name, def); }
  double f(const char* name, double def) const { return attr_float(attrs(), name, def); }
  std::vector<int64_t> is(const char* name, std::vector<int64_t> def = {}) const {
    return attr_ints(attrs(), name, std::move(def));
  }
  std::string s(const char* name, const char* def) const { return attr_string(attrs(), name, def); }
  DType dtype_of(ValueId v) const { return g_.value(v).type.dtype; }

  // GELU with ONNX opset 17's ops (it has no Gelu until 20). The erf form is
  // exactly the pattern the importer fuses back into one Gelu.
  void gelu(const std::string& x, const std::string& y, DType dt, const std::string& approximate) {
    if (approximate == "none") {
      const std::string d = tmp("gelu_div"), e = tmp("gelu_erf"), a = tmp("gelu_add"),
                        m = tmp("gelu_mul");
      add("Div", {x, const_scalar(node_->name + "/sqrt2", dt, std::numbers::sqrt2)}, {d});
      add("Erf", {d}, {e});
      add("Add", {e, const_scalar(node_->name + "/one", dt, 1.0)}, {a});
      add("Mul", {x, a}, {m});
      add("Mul", {m, const_scalar(node_->name + "/half", dt, 0.5)}, {y});
    } else if (approximate == "tanh") {
      // 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³)))
      const std::string x2 = tmp("gelu_x2"), x3 = tmp("gelu_x3"), c = tmp("gelu_cubic"),
                        sum = tmp("gelu_sum"), sc = tmp("gelu_scaled"), t = tmp("gelu_tanh"),
                        a = tmp("gelu_add"), m = tmp("gelu_mul");
      add("Mul", {x, x}, {x2});
      add("Mul", {x2, x}, {x3});
      add("Mul", {x3, const_scalar(node_->name + "/k", dt, 0.044715)}, {c});
      add("Add", {x, c}, {sum});
      add("Mul",
          {sum,
           const_scalar(node_->name + "/sqrt_2_over_pi", dt, std::sqrt(2.0 / std::numbers::pi))},
          {sc});
      add("Tanh", {sc}, {t});
      add("Add", {t, const_scalar(node_->name + "/one", dt, 1.0)}, {a});
      add("Mul", {x, a}, {m});
      add("Mul", {m, const_scalar(node_->name + "/half", dt, 0.5)}, {y});
    } else {
      fail("Gelu approximate '" + approximate + "' has no ONNX form");
    }
  }

  // RMSNorm with opset 17's ops (RMSNormalization is opset 23): in f32 for
  // 16-bit X, as ampx computes it, with the axes as ReduceMean's attribute.
  void rms_norm(const Node& n, const std::string& y) {
    const DType dt = dtype_of(n.inputs.at(0));
    const bool half = is_16bit_float(dt);
    const DType cdt = half ? DType::kF32 : dt;
    std::string x = in(n.inputs.at(0)), scale = in(n.inputs.at(1));
    if (half) {
      const std::string xf = tmp("rms_x_f32"), sf = tmp("rms_scale_f32");
      set_int(add("Cast", {x}, {xf}), "to", onnx_elem_type(cdt));
      set_int(add("Cast", {scale}, {sf}), "to", onnx_elem_type(cdt));
      x = xf;
      scale = sf;
    }
    const auto rank = static_cast<int64_t>(g_.value(n.inputs.at(0)).type.shape.size());
    int64_t axis = i("axis", -1);
    if (axis < 0) axis += rank;
    std::vector<int64_t> axes;
    for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
    const std::string sq = tmp("rms_square"), ms = tmp("rms_mean_square"), e = tmp("rms_add_eps"),
                      r = tmp("rms_sqrt"), nx = tmp("rms_normalised");
    add("Mul", {x, x}, {sq});
    auto* mean = add("ReduceMean", {sq}, {ms});
    set_ints(mean, "axes", axes);
    set_int(mean, "keepdims", 1);
    add("Add", {ms, const_scalar(node_->name + "/epsilon", cdt, f("epsilon", 1e-5))}, {e});
    add("Sqrt", {e}, {r});
    add("Div", {x, r}, {nx});
    if (!half) {
      add("Mul", {nx, scale}, {y});
      return;
    }
    const std::string yf = tmp("rms_y_f32");
    add("Mul", {nx, scale}, {yf});
    set_int(add("Cast", {yf}, {y}), "to", onnx_elem_type(dt));
  }

  // Where the main op of a node with an `activation` epilogue writes: a
  // temporary, from which the activation writes the real output.
  std::string main_output() {
    const std::string act = s("activation", "none");
    return act == "none" ? out(node_->outputs[0]) : tmp("pre_activation");
  }
  void epilogue(const std::string& pre) {
    const std::string act = s("activation", "none");
    const std::string& y = out(node_->outputs[0]);
    const DType dt = dtype_of(node_->outputs[0]);
    if (act == "none") return;
    if (act == "relu") {
      add("Relu", {pre}, {y});
    } else if (act == "gelu") {
      gelu(pre, y, dt, "none");
    } else if (act == "gelu_tanh") {
      gelu(pre, y, dt, "tanh");
    } else if (act == "clip") {
      std::string lo, hi;
      if (has("activation_alpha"))
        lo = const_scalar(node_->name + "/clip_min", dt, f("activation_alpha", 0));
      if (has("activation_beta"))
        hi = const_scalar(node_->name + "/clip_max", dt, f("activation_beta", 0));
      add("Clip", {pre, lo, hi}, {y});
    } else if (act == "hardsigmoid") {
      auto* p = add("HardSigmoid", {pre}, {y});
      set_float(p, "alpha", f("activation_alpha", 0.2));
      set_float(p, "beta", f("activation_beta", 0.5));
    } else if (act == "hardswish") {
      add("HardSwish", {pre}, {y});
    } else if (act == "sigmoid") {
      add("Sigmoid", {pre}, {y});
    } else if (act == "swish") {
      const std::string sig = tmp("swish_sigmoid");
      add("Sigmoid", {pre}, {sig});
      add("Mul", {pre, sig}, {y});
    } else if (act == "tanh") {
      add("Tanh", {pre}, {y});
    } else if (act == "leaky_relu") {
      set_float(add("LeakyRelu", {pre}, {y}), "alpha", f("activation_alpha", 0.01));
    } else {
      fail("activation '" + act + "' has no ONNX form");
    }
  }

  std::vector<std::string> ins(const Node& n) {
    std::vector<std::string> v;
    for (ValueId x : n.inputs) v.push_back(in(x));
    return v;
  }
  std::vector<std::string> outs(const Node& n) const {
    std::vector<std::string> v;
    for (ValueId x : n.outputs) v.push_back(out(x));
    return v;
  }

  void emit(const Node& n) {
    first_ = true;
    const std::string op(op_name(n.op));
    const std::string& y = out(n.outputs.at(0));
    switch (n.op) {
      case OpType::kConv2d:
      case OpType::kConvTranspose: {
        const std::string pre = main_output();
        const Shape& w = g_.value(n.inputs.at(1)).type.shape;
        // A fused residual (input 3): Conv, then Add, then the activation.
        const bool residual = n.op == OpType::kConv2d && n.inputs.size() > 3;
        std::vector<std::string> conv_ins = ins(n);
        if (residual) conv_ins.resize(3);
        const std::string conv_out = residual ? tmp("pre_residual") : pre;
        auto* p = add(n.op == OpType::kConv2d ? "Conv" : "ConvTranspose", conv_ins, {conv_out});
        if (w.size() == 4) set_ints(p, "kernel_shape", {w[2], w[3]});
        set_ints(p, "strides", is("strides", {1, 1}));
        set_ints(p, "pads", is("pads", {0, 0, 0, 0}));
        set_ints(p, "dilations", is("dilations", {1, 1}));
        set_int(p, "group", i("group", 1));
        if (n.op == OpType::kConvTranspose)
          set_ints(p, "output_padding", is("output_padding", {0, 0}));
        if (residual) add("Add", {conv_out, in(n.inputs[3])}, {pre});
        epilogue(pre);
        break;
      }
      case OpType::kMatMul: {
        const std::string pre = main_output();
        if (n.inputs.size() > 2) {  // bias [N]: MatMul then Add
          const std::string mm = tmp("matmul");
          add("MatMul", {in(n.inputs[0]), in(n.inputs[1])}, {mm});
          add("Add", {mm, in(n.inputs[2])}, {pre});
        } else {
          add("MatMul", ins(n), {pre});
        }
        epilogue(pre);
        break;
      }
      case OpType::kGemm: {
        const std::string pre = main_output();
        auto* p = add("Gemm", ins(n), {pre});
        set_float(p, "alpha", f("alpha", 1.0));
        set_float(p, "beta", f("beta", 1.0));
        set_int(p, "transA", i("transA", 0));
        set_int(p, "transB", i("transB", 0));
        epilogue(pre);
        break;
      }
      case OpType::kBatchNorm: {
        const std::string pre = main_output();
        set_float(add("BatchNormalization", ins(n), {pre}), "epsilon", f("epsilon", 1e-5));
        epilogue(pre);
        break;
      }
      case OpType::kLayerNorm: {
        auto* p = add("LayerNormalization", ins(n), {y});
        set_int(p, "axis", i("axis", -1));
        set_float(p, "epsilon", f("epsilon", 1e-5));
        break;
      }
      case OpType::kRMSNorm:
        rms_norm(n, y);
        break;
      case OpType::kSoftmax:
      case OpType::kLogSoftmax:
        set_int(add(op, ins(n), {y}), "axis", i("axis", -1));
        break;
      case OpType::kRelu:
      case OpType::kSigmoid:
      case OpType::kTanh:
      case OpType::kErf:
      case OpType::kSqrt:
      case OpType::kReciprocal:
      case OpType::kExp:
      case OpType::kLog:
      case OpType::kNeg:
      case OpType::kHardSwish:
      case OpType::kGlobalAveragePool:
      case OpType::kPRelu:
      case OpType::kAdd:
      case OpType::kSub:
      case OpType::kMul:
      case OpType::kDiv:
      case OpType::kPow:
      case OpType::kWhere:
      case OpType::kEqual:
      case OpType::kFloor:
      case OpType::kCeil:
      case OpType::kRound:
      case OpType::kAbs:
      case OpType::kSoftplus:
      case OpType::kSin:
      case OpType::kCos:
      case OpType::kTan:
      case OpType::kAsin:
      case OpType::kAcos:
      case OpType::kAtan:
      case OpType::kSinh:
      case OpType::kCosh:
      case OpType::kAsinh:
      case OpType::kAcosh:
      case OpType::kAtanh:
      case OpType::kLess:
      case OpType::kGreater:
      case OpType::kLessOrEqual:
      case OpType::kGreaterOrEqual:
      case OpType::kNot:
      case OpType::kAnd:
      case OpType::kOr:
      case OpType::kMin:
      case OpType::kMax:
      case OpType::kSum:
      case OpType::kMean:
        add(op, ins(n), {y});
        break;
      case OpType::kMish: {  // opset 17 has no Mish (18): x·tanh(softplus(x))
        const std::string sp = tmp("mish_softplus"), t = tmp("mish_tanh");
        add("Softplus", ins(n), {sp});
        add("Tanh", {sp}, {t});
        add("Mul", {in(n.inputs.at(0)), t}, {y});
        break;
      }
      case OpType::kDropout:  // no ratio, not training: identity, as in the IR
        add("Dropout", {in(n.inputs.at(0))}, {y});
        break;
      case OpType::kGelu:
        gelu(in(n.inputs.at(0)), y, dtype_of(n.outputs[0]), s("approximate", "none"));
        break;
      case OpType::kClip: {
        const DType dt = dtype_of(n.inputs.at(0));
        std::string lo, hi;
        if (has("min")) lo = const_scalar(n.name + "/min", dt, f("min", 0));
        if (has("max")) hi = const_scalar(n.name + "/max", dt, f("max", 0));
        add("Clip", {in(n.inputs[0]), lo, hi}, {y});
        break;
      }
      case OpType::kLeakyRelu:
        set_float(add("LeakyRelu", ins(n), {y}), "alpha", f("alpha", 0.01));
        break;
      case OpType::kHardSigmoid: {
        auto* p = add("HardSigmoid", ins(n), {y});
        set_float(p, "alpha", f("alpha", 0.2));
        set_float(p, "beta", f("beta", 0.5));
        break;
      }
      case OpType::kMaxPool:
      case OpType::kAveragePool: {
        auto* p = add(op, ins(n), {y});
        set_ints(p, "kernel_shape", is("kernel_shape"));
        set_ints(p, "strides", is("strides", {1, 1}));
        set_ints(p, "pads", is("pads", {0, 0, 0, 0}));
        set_int(p, "ceil_mode", i("ceil_mode", 0));
        if (n.op == OpType::kAveragePool)
          set_int(p, "count_include_pad", i("count_include_pad", 0));
        if (const auto d = is("dilations", {1, 1}); d != std::vector<int64_t>{1, 1}) {
          // AveragePool takes dilations from opset 19 on; MaxPool from 10.
          if (n.op == OpType::kAveragePool)
            fail(fmt::format("a dilated AveragePool needs opset 19, the export writes {}", kOpset));
          set_ints(p, "dilations", d);
        }
        break;
      }
      case OpType::kMaxPoolIndices: {  // ONNX MaxPool's Indices, its Y unused
        auto* p = add("MaxPool", ins(n), {unique(y + "_values"), y});
        set_ints(p, "kernel_shape", is("kernel_shape"));
        set_ints(p, "strides", is("strides", {1, 1}));
        set_ints(p, "pads", is("pads", {0, 0, 0, 0}));
        set_int(p, "ceil_mode", i("ceil_mode", 0));
        set_int(p, "storage_order", i("storage_order", 0));
        if (const auto d = is("dilations", {1, 1}); d != std::vector<int64_t>{1, 1})
          set_ints(p, "dilations", d);
        break;
      }
      case OpType::kReduceMean:
      case OpType::kReduceMax:
      case OpType::kReduceMin:
      case OpType::kReduceProd:
      case OpType::kReduceL2:
      case OpType::kReduceSumSquare:
      case OpType::kReduceLogSumExp: {  // axes are still an attribute in opset 17
        auto* p = add(op, ins(n), {y});
        if (const auto axes = is("axes"); !axes.empty()) set_ints(p, "axes", axes);
        set_int(p, "keepdims", i("keepdims", 1));
        break;
      }
      case OpType::kReduceSum: {  // axes an input since opset 13
        const auto axes = is("axes");
        auto* p =
            add("ReduceSum",
                {in(n.inputs.at(0)), axes.empty() ? "" : const_i64(n.name + "/axes", axes)}, {y});
        set_int(p, "keepdims", i("keepdims", 1));
        break;
      }
      case OpType::kArgMax:
      case OpType::kArgMin: {
        auto* p = add(op, ins(n), {y});
        set_int(p, "axis", i("axis", 0));
        set_int(p, "keepdims", i("keepdims", 1));
        set_int(p, "select_last_index", i("select_last_index", 0));
        break;
      }
      case OpType::kMod:
        set_int(add("Mod", ins(n), {y}), "fmod", i("fmod", 0));
        break;
      case OpType::kCumSum: {  // axis an input
        auto* p = add(
            "CumSum",
            {in(n.inputs.at(0)), const_scalar(n.name + "/axis", DType::kI64, double(i("axis", 0)))},
            {y});
        set_int(p, "exclusive", i("exclusive", 0));
        set_int(p, "reverse", i("reverse", 0));
        break;
      }
      case OpType::kCumProd:
        fail("CumProd has no ONNX form at opset 17 (ONNX defines it from opset 26)");
      case OpType::kTopK: {  // k an input since opset 10
        auto* p = add("TopK", {in(n.inputs.at(0)), const_i64(n.name + "/k", {i("k", 0)})}, outs(n));
        set_int(p, "axis", i("axis", -1));
        set_int(p, "largest", i("largest", 1));
        set_int(p, "sorted", i("sorted", 1));
        break;
      }
      case OpType::kGatherElements:
        set_int(add("GatherElements", ins(n), {y}), "axis", i("axis", 0));
        break;
      case OpType::kGatherND:
        set_int(add("GatherND", ins(n), {y}), "batch_dims", i("batch_dims", 0));
        break;
      case OpType::kScatterND: {  // max and min need opset 18; the export writes 17
        const std::string r = s("reduction", "none");
        if (r == "max" || r == "min") fail("ScatterND reduction '" + r + "' needs opset 18");
        auto* p = add("ScatterND", ins(n), {y});
        if (r != "none") set_string(p, "reduction", r);
        break;
      }
      case OpType::kBitShift: {  // opset 11 takes the unsigned types; signed ones need 28
        if (!is_unsigned(dtype_of(n.inputs.at(0))))
          fail("BitShift of a signed type needs opset 28; the export writes 17");
        set_string(add("BitShift", ins(n), {y}), "direction", s("direction", "LEFT"));
        break;
      }
      case OpType::kBitwiseAnd:
      case OpType::kBitwiseOr:
      case OpType::kBitwiseXor:
      case OpType::kBitwiseNot:
        fail(std::string(op) + " needs opset 18; the export writes 17");
      case OpType::kBitCast:
        fail("BitCast needs opset 26; the export writes 17");
      case OpType::kDet:  // opset 11's Det is the op set's
        add("Det", ins(n), {y});
        break;
      case OpType::kCol2Im:
        fail("Col2Im needs opset 18; the export writes 17");
      case OpType::kReshape:
        add("Reshape", {in(n.inputs.at(0)), const_i64(n.name + "/shape", is("shape"))}, {y});
        break;
      case OpType::kFlatten:
        set_int(add("Flatten", ins(n), {y}), "axis", i("axis", 1));
        break;
      case OpType::kTranspose: {
        auto* p = add("Transpose", ins(n), {y});
        if (has("perm")) set_ints(p, "perm", is("perm"));
        break;
      }
      case OpType::kConcat:
        set_int(add("Concat", ins(n), {y}), "axis", i("axis", 0));
        break;
      case OpType::kGather:
        set_int(add("Gather", ins(n), {y}), "axis", i("axis", 0));
        break;
      case OpType::kSlice: {
        std::vector<std::string> v{in(n.inputs.at(0)), const_i64(n.name + "/starts", is("starts")),
                                   const_i64(n.name + "/ends", is("ends"))};
        if (has("axes") || has("steps"))
          v.push_back(has("axes") ? const_i64(n.name + "/axes", is("axes")) : "");
        if (has("steps")) v.push_back(const_i64(n.name + "/steps", is("steps")));
        add("Slice", v, {y});
        break;
      }
      case OpType::kSplit:
        set_int(
            add("Split", {in(n.inputs.at(0)), const_i64(n.name + "/split", is("split"))}, outs(n)),
            "axis", i("axis", 0));
        break;
      case OpType::kExpand:
        add("Expand", {in(n.inputs.at(0)), const_i64(n.name + "/shape", is("shape"))}, {y});
        break;
      case OpType::kPad: {
        const std::string mode = s("mode", "constant");
        std::vector<std::string> v{in(n.inputs.at(0)), const_i64(n.name + "/pads", is("pads"))};
        if (mode == "constant")
          v.push_back(const_scalar(n.name + "/value", dtype_of(n.inputs[0]), f("value", 0)));
        set_string(add("Pad", v, {y}), "mode", mode);
        break;
      }
      case OpType::kResize: {
        // opset 17 has no antialias (18); ONNX's scales become the scales
        // input, which must say the same in f32 (the output size floors).
        if (i("antialias", 0) != 0) fail("Resize with antialias needs opset 18 (export writes 17)");
        std::string roi, scales, sizes;
        if (has("roi"))
          roi = const_f32(n.name + "/roi", std::get<std::vector<double>>(attrs().at("roi")));
        if (has("scales")) {
          const auto& sc = std::get<std::vector<double>>(attrs().at("scales"));
          const Shape& xs = g_.value(n.inputs.at(0)).type.shape;
          const std::vector<int64_t> want = is("sizes");
          for (size_t d = 0; d < sc.size(); ++d) {
            const auto f32 = static_cast<float>(sc[d]);
            if (static_cast<double>(f32) != sc[d] ||
                static_cast<int64_t>(std::floor(static_cast<double>(xs[d]) * sc[d])) != want[d])
              fail("Resize scales that opset 17's f32 scales input cannot carry");
          }
          scales = const_f32(n.name + "/scales", sc);
        } else {
          sizes = const_i64(n.name + "/sizes", is("sizes"));
        }
        auto* p = add("Resize", {in(n.inputs.at(0)), roi, scales, sizes}, {y});
        set_string(p, "mode", s("mode", "nearest"));
        if (has("cubic_coeff_a")) set_float(p, "cubic_coeff_a", f("cubic_coeff_a", -0.75));
        if (has("exclude_outside")) set_int(p, "exclude_outside", i("exclude_outside", 0));
        if (has("extrapolation_value"))
          set_float(p, "extrapolation_value", f("extrapolation_value", 0));
        set_string(p, "coordinate_transformation_mode",
                   s("coordinate_transformation_mode", "half_pixel"));
        set_string(p, "nearest_mode", s("nearest_mode", "round_prefer_floor"));
        break;
      }
      case OpType::kGridSample: {  // opset 16's: 4-D, bilinear/bicubic
        if (g_.value(n.inputs.at(0)).type.shape.size() != 4)
          fail("GridSample on a non-4-D X needs opset 20 (export writes 17)");
        const std::string mode = s("mode", "linear");
        auto* p = add("GridSample", {in(n.inputs.at(0)), in(n.inputs.at(1))}, {y});
        set_string(p, "mode", mode == "linear" ? "bilinear" : mode == "cubic" ? "bicubic" : mode);
        set_string(p, "padding_mode", s("padding_mode", "zeros"));
        set_int(p, "align_corners", i("align_corners", 0));
        break;
      }
      case OpType::kLSTM:
      case OpType::kGRU:
      case OpType::kRNN: {
        // The op set's order X, W, R, B, initial_h[, initial_c, P][,
        // sequence_lens] back to ONNX's X, W, R, B, sequence_lens,
        // initial_h[, initial_c, P].
        const std::vector<std::string> v = ins(n);
        const bool lstm = n.op == OpType::kLSTM;
        const size_t fixed = lstm ? 7 : 5;
        std::vector<std::string> onnx_ins{v[0], v[1], v[2], v[3], v.size() > fixed ? v[fixed] : "",
                                          v[4]};
        if (lstm) onnx_ins.insert(onnx_ins.end(), {v[5], v[6]});
        auto* p = add(op, onnx_ins, outs(n));
        set_int(p, "hidden_size", i("hidden_size", 1));
        set_string(p, "direction", s("direction", "forward"));
        if (has("activations")) set_strings(p, "activations", s("activations", ""));
        for (const char* name : {"activation_alpha", "activation_beta"})
          if (has(name)) set_floats(p, name, std::get<std::vector<double>>(attrs().at(name)));
        if (has("clip") && f("clip", 0) > 0) set_float(p, "clip", f("clip", 0));
        if (lstm) set_int(p, "input_forget", i("input_forget", 0));
        if (n.op == OpType::kGRU) set_int(p, "linear_before_reset", i("linear_before_reset", 0));
        break;
      }
      case OpType::kCast: {
        const auto to = static_cast<DType>(i("to", 0));
        const int32_t elem = onnx_elem_type(to);
        if (elem == onnx::TensorProto::UNDEFINED) fail("Cast to an invalid dtype");
        set_int(add("Cast", ins(n), {y}), "to", elem);
        break;
      }
      // ONNX defines them from opset 23; the export writes 17, and their
      // decompositions (the masks, the fully-masked-row guard) are not
      // written yet: a one-line refusal rather than a different op.
      case OpType::kAttention:
      case OpType::kRotaryEmbedding:
        fail(std::string(op) + " needs opset 23; the export writes opset " +
             std::to_string(kOpset));
      // ONNX defines it from opset 27; its opset-17 form would be the
      // recurrence unrolled over the tokens (a Scan): not written.
      case OpType::kLinearAttention:
        fail("LinearAttention needs opset 27; the export writes opset " + std::to_string(kOpset));
      default:
        fail("no ONNX form for this op");
    }
  }

  void check() {
    try {
      onnx::checker::check_model(model_);
    } catch (const std::exception& e) {
      throw OnnxError("export: the ONNX checker rejects the model: " + one_line(e.what()));
    }
    // check_model(full_check=True) in Python: strict shape inference with
    // type checks, on a copy (inference adds what it infers).
    onnx::ModelProto copy = model_;
    try {
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(true, 1, false));
    } catch (const std::exception& e) {
      throw OnnxError("export: ONNX shape inference rejects the model: " + one_line(e.what()));
    }
  }

  const Graph& g_;
  const ExportOptions& options_;
  onnx::ModelProto model_;
  onnx::GraphProto* gp_ = nullptr;
  std::vector<std::string> names_;         // per ValueId
  std::unordered_set<std::string> taken_;  // value and initializer names
  std::unordered_set<std::string> node_names_;
  std::vector<std::string> keep_f32_nodes_;  // ONNX nodes of Node::keep_f32 IR nodes
  std::vector<ConstantData> constant_;       // per ValueId: weights and folded values
  std::vector<bool> initialized_;
  const Node* node_ = nullptr;
  int64_t batch_ = 0;             // ExportOptions::batch_dim: the graph's batch size
  std::vector<Shape> rebatched_;  // per ValueId: its shape at batch_ + 1
  bool first_ = true;
  ExportStats st_;
};

}  // namespace

std::string export_onnx(const Graph& graph, const ExportOptions& options, ExportStats* stats) {
  return Exporter(graph, options).run(stats);
}

void write_onnx(const Graph& graph, const std::string& path, const ExportOptions& options,
                ExportStats* stats) {
  fileio::write_file_atomically(path, export_onnx(graph, options, stats));
}

}  // namespace ampx::onnx_io
