#include "importer.hpp"

#include <ampx/exec/host_tensor.hpp>
#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/ir/shape_inference.hpp>
#include <ampx/ir/verifier.hpp>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/defs/schema.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "constant_folding.hpp"
#include "decomposed_patterns.hpp"
#include "model_metadata.hpp"
#include "onnx_ops.hpp"
#include "tensor_proto.hpp"
#include "tensor_size.hpp"

namespace ampx::onnx_io {

namespace fs = std::filesystem;

namespace {

// How deep a model that fails protobuf's recursion limit is parsed again,
// only to tell that limit from a corrupt file: far below what the stack
// holds (a few hundred bytes a level).
constexpr int kDeepestParse = 2000;

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// What a failure outside the importer's own checks was, without the C++
// library's internals ("std::bad_alloc", "vector::_M_range_check").
std::string describe(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "out of memory";
  if (dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const std::runtime_error*>(&e))
    return e.what();
  return "an attribute or input is out of range";
}

std::string without_node_prefix(const std::string& what, std::string_view node,
                                std::string_view op) {
  const std::string prefix = fmt::format("node '{}' ({}): ", node, op);
  return what.starts_with(prefix) ? what.substr(prefix.size()) : what;
}

}  // namespace

bool is_onnx_path(std::string_view spec) {
  return spec.size() > 5 && spec.substr(spec.size() - 5) == ".onnx";
}

Importer::Importer(fs::path path, const ImportOptions& options)
    : path_(std::move(path)),
      options_(options),
      max_tensor_bytes_(tensor_bytes_limit(options.max_tensor_bytes)) {
  base_dir_ = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
}

std::string Importer::located(const std::string& what) const {
  if (node_)
    return fmt::format("model '{}': node '{}' ({}): {}", path_.string(), node_name_,
                       node_->op_type(), what);
  return fmt::format("model '{}': {}", path_.string(), what);
}

void Importer::fail(const std::string& what) const {
  throw OnnxError(located(what));
}

void Importer::fail_needs_value(const std::string& what) const {
  throw ValueNeededError(located(what));
}

int64_t Importer::to_i64(__int128 v, std::string_view what) const {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
    fail(fmt::format("{} overflows int64", what));
  return static_cast<int64_t>(v);
}

// Op-set and kernel messages start with "node '<IR node>' (<IR op>): ": the
// ONNX node is named by fail(), so that prefix goes; a helper node keeps its
// name.
void Importer::fail_in(std::string_view ir_node, std::string_view ir_op,
                       const std::string& what) const {
  const std::string rest = without_node_prefix(what, ir_node, ir_op);
  if (ir_node == node_name_) fail(rest);
  fail(fmt::format("IR {} '{}': {}", ir_op, ir_node, rest));
}

void Importer::check_size(const TensorType& type, std::string_view what) const {
  if (auto problem = tensor_size_problem(type, max_tensor_bytes_))
    fail(fmt::format("{}: {}", what, *problem));
}

std::string Importer::where_tensor(const std::string& tensor) const {
  return fmt::format("model '{}': tensor '{}'", path_.string(), tensor);
}

void Importer::load() {
  fileio::RegularFile file = [&] {
    try {
      return fileio::RegularFile(path_);
    } catch (const fileio::FileError& e) {
      fail(e.reason());
    }
  }();
  const auto parse = [&](onnx::ModelProto& m, int recursion_limit) {
    if (::lseek(file.fd(), 0, SEEK_SET) != 0) return false;
    google::protobuf::io::FileInputStream raw(file.fd());
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    coded.SetRecursionLimit(recursion_limit);
    return m.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  };
  // protobuf's own bound on nested messages (each If branch or Loop body
  // is three: attribute, graph, node) keeps the parser, and the importer
  // that recurses with it, off the end of the stack. A model that parses
  // only past it is told so, not called corrupt.
  const int limit = google::protobuf::io::CodedInputStream::GetDefaultRecursionLimit();
  if (!parse(model_, limit)) {
    onnx::ModelProto deeper;
    if (parse(deeper, kDeepestParse))
      fail(fmt::format(
          "the model nests messages deeper than protobuf's limit of {} (about {} nested If, "
          "Loop or Scan subgraphs), which ampx keeps",
          limit, limit / 3));
    fail("not a valid ONNX model (truncated or corrupt protobuf)");
  }
  if (!model_.has_graph() || model_.ir_version() <= 0)
    fail("not an ONNX model (no graph or no ir_version; empty or another kind of file?)");
  for (const auto& prop : model_.metadata_props())
    if (prop.key() == kKeepF32NodesKey)
      for (size_t at = 0; at <= prop.value().size();) {
        const size_t end = std::min(prop.value().find('\n', at), prop.value().size());
        keep_f32_nodes_.insert(prop.value().substr(at, end - at));
        at = end + 1;
      }
  stats_.producer = model_.producer_name();
  if (!model_.producer_version().empty()) stats_.producer += " " + model_.producer_version();
}

// The nodes of a graph and of every subgraph in it (If branches, Loop
// bodies), depth first.
template <class Fn>
void for_each_node(const onnx::GraphProto& g, const Fn& fn) {
  for (const auto& n : g.node()) {
    fn(n);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) for_each_node(a.g(), fn);
      for (const auto& sub : a.graphs()) for_each_node(sub, fn);
    }
  }
}

// The default domain's opset, and the versions of the other domains a
// model imports (ai.onnx.ml, ai.onnx.preview.training). A model may import
// no default opset when every node is of another domain (ONNX's
// ai.onnx.ml and training cases do): then no node may be of it.
void Importer::read_opset() {
  for (const auto& o : model_.opset_import()) {
    if (is_default_domain(o.domain()))
      opset_ = o.version();
    else
      domain_opsets_[o.domain()] = o.version();
  }
  if (opset_ == 0) {
    const onnx::NodeProto* first = nullptr;
    for_each_node(model_.graph(), [&](const onnx::NodeProto& n) {
      if (!first && is_default_domain(n.domain())) first = &n;
    });
    if (first)
      fail(fmt::format("no opset of the default ONNX domain is imported, but {} is of that domain",
                       first->name().empty()
                           ? fmt::format("a {} node", first->op_type())
                           : fmt::format("node '{}' ({})", first->name(), first->op_type())));
    return;
  }
  if (opset_ < kMinLegacyOpset || opset_ > kMaxImportOpset)
    fail(
        fmt::format("opset {} is not supported (ampx imports opsets {} to {}, and {} to {} where "
                    "each op has its opset-{} definition)",
                    opset_, kMinImportOpset, kMaxImportOpset, kMinLegacyOpset, kMinImportOpset - 1,
                    kMinImportOpset));
  stats_.opset = opset_;
  if (opset_ < kMinImportOpset) {
    check_legacy_opset();
    opset_ = kMinImportOpset;  // every op has its opset-7 form: convert it as that
  }
}

void Importer::read_initializers() {
  const auto& g = model_.graph();
  if (g.sparse_initializer_size() > 0)
    fail(fmt::format("sparse initializer '{}' is not supported",
                     g.sparse_initializer(0).values().name()));
  for (const auto& t : g.initializer()) {
    if (t.name().empty()) fail("an initializer has no name");
    TensorData d = read_tensor(t, base_dir_, where_tensor(t.name()), max_tensor_bytes_);
    values_[t.name()] = graph_.add_constant(t.name(), d.type, std::move(d.bytes));
  }
}

ValueId Importer::add_tensor_input(const std::string& name, const onnx::TypeProto_Tensor& tt) {
  const std::string what = fmt::format("input '{}'", name);
  const auto dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype)
    fail(fmt::format("{} has element type {}, which ampx does not support", what,
                     onnx_elem_type_name(tt.elem_type())));
  const auto pinned = options_.input_shapes.find(name);
  const auto origin_it = options_.input_shape_origins.find(name);
  const std::string origin =
      origin_it == options_.input_shape_origins.end() ? "--input-shape" : origin_it->second;
  Shape shape;
  if (!tt.has_shape()) {
    if (pinned == options_.input_shapes.end())
      fail(fmt::format("{} has no shape: give it with --input-shape {}=DIMS", what, name));
    shape = pinned->second;
  } else {
    const auto& dims = tt.shape().dim();
    if (pinned != options_.input_shapes.end() &&
        pinned->second.size() != static_cast<size_t>(dims.size()))
      fail(fmt::format("{} has rank {}, but {} gives {} dimensions", what, dims.size(), origin,
                       pinned->second.size()));
    for (int i = 0; i < dims.size(); ++i) {
      const auto& d = dims.Get(i);
      const bool fixed = d.has_dim_value() && d.dim_value() > 0;
      if (pinned != options_.input_shapes.end()) {
        const int64_t want = pinned->second[static_cast<size_t>(i)];
        if (fixed && d.dim_value() != want)
          fail(fmt::format("{} dimension {} is fixed to {} in the model, {} says {}", what, i,
                           d.dim_value(), origin, want));
        shape.push_back(want);
      } else if (fixed) {
        shape.push_back(d.dim_value());
      } else if (i == 0 && options_.batch_size > 0) {
        shape.push_back(options_.batch_size);
      } else if (d.has_dim_value() && d.dim_value() == 0) {
        shape.push_back(0);  // an empty input (read as a constant below)
      } else {
        const std::string sym = d.has_dim_param() ? "'" + d.dim_param() + "'" : "unknown";
        fail(
            fmt::format("{} dimension {} is symbolic ({}): pin it with --input-shape {}=DIMS "
                        "(e.g. 1x3x224x224) or give the array (--input {}=FILE.npy)",
                        what, i, sym, name, name));
      }
    }
  }
  for (int64_t d : shape)
    if (d < 0) fail(fmt::format("{} has a negative dimension in {}", what, shape_str(shape)));
  check_size({*dtype, shape}, what);
  const ValueId id = graph_.add_input(name, {*dtype, shape});
  // An input with no elements has one value, the empty tensor, whatever
  // is fed (an empty `axes`, CastLike's type-only `target_type`): the
  // nodes read it as that constant, and it stays an input of the graph
  // (fed, unused) so the model's signature is the same.
  if (element_count(shape) == 0)
    return graph_.add_constant(name + "/empty", {*dtype, shape}, std::vector<std::byte>{});
  return id;
}

void Importer::read_inputs() {
  std::vector<std::string> names;
  for (const auto& in : model_.graph().input()) {
    // Old exporters list initializers as inputs too: they stay constants.
    if (values_.contains(in.name())) continue;
    if (in.type().has_sequence_type() || in.type().has_optional_type()) {
      read_composite_input(in, names);
      continue;
    }
    names.push_back(in.name());
    if (!in.type().has_tensor_type()) fail(fmt::format("input '{}' is not a tensor", in.name()));
    values_[in.name()] = add_tensor_input(in.name(), in.type().tensor_type());
  }
  for (const auto& [name, length] : options_.composite_inputs.sequence_lengths)
    if (!composites_.contains(name))
      fail(fmt::format("a sequence length is given for '{}', which is not a sequence input", name));
  for (const auto& name : options_.composite_inputs.absent)
    if (!composites_.contains(name))
      fail(fmt::format("'{}' is given as none, but it is not an optional input", name));
  for (const auto& [name, shape] : options_.input_shapes) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    // A shape pinned from an array (input_shape_origins) is the caller's
    // to match against the inputs: it names what it read, not a shape.
    if (options_.input_shape_origins.contains(name)) continue;
    fail(fmt::format("--input-shape names '{}', which is not an input of the model (inputs: {})",
                     name, known.empty() ? "none" : known));
  }
}

// Every unsupported op type at once, with its count: a user porting a model
// sees the whole list, not the first miss.
void Importer::check_supported() const {
  std::map<std::string, int> missing;
  for_each_node(model_.graph(), [&](const onnx::NodeProto& n) {
    const bool default_domain = is_default_domain(n.domain());
    const int64_t version = default_domain ? opset_ : domain_opset(n.domain());
    if (is_supported(n.domain(), n.op_type(), version)) return;
    std::string what = default_domain ? n.op_type() : n.domain() + "." + n.op_type();
    // An op ampx imports, but not one this opset defines (ONNX Runtime
    // refuses it too): say which opsets do.
    const std::string where = defined_in(n.domain(), n.op_type(), version);
    if (!where.empty()) what += " (" + where + ")";
    missing[what]++;
  });
  if (missing.empty()) return;
  std::string list;
  int total = 0;
  for (const auto& [op, count] : missing) {
    // "Gelu (opset 20+)" -> "Gelu x1 (opset 20+)"
    const size_t paren = op.find(" (");
    list += paren == std::string::npos
                ? fmt::format("{}{} x{}", list.empty() ? "" : ", ", op, count)
                : fmt::format("{}{} x{}{}", list.empty() ? "" : ", ", op.substr(0, paren), count,
                              op.substr(paren));
    total += count;
  }
  // The opsets the model imports: the default domain's, then the others.
  std::string opsets = opset_ > 0 ? fmt::format("opset {}", opset_) : "";
  for (const auto& [domain, version] : domain_opsets_)
    opsets += fmt::format("{}{} {}", opsets.empty() ? "" : ", ", domain, version);
  fail(fmt::format("{} unsupported op type{} ({} node{}{}{}): {}", missing.size(),
                   missing.size() == 1 ? "" : "s", total, total == 1 ? "" : "s",
                   opsets.empty() ? "" : ", ", opsets, list));
}

// Opsets 1-6: each default-domain op must have the definition (ONNX's
// schema, by the version that introduced it) that applies at opset 7, so
// that converting the node as opset 7 is exact.
void Importer::check_legacy_opset() const {
  std::string refused;
  for_each_node(model_.graph(), [&](const onnx::NodeProto& n) {
    if (!refused.empty() || !(n.domain().empty() || n.domain() == "ai.onnx")) return;
    const auto* old = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset_), "");
    const auto* at7 = onnx::OpSchemaRegistry::Schema(n.op_type(), kMinImportOpset, "");
    if (!old)
      refused = fmt::format("{} is not defined at opset {}", n.op_type(), opset_);
    else if (!at7 || at7->since_version() != old->since_version())
      refused = fmt::format(
          "{} at opset {} is {}-{}, which opset 7 changed; ampx imports opsets "
          "1-6 only where every op has its opset-7 definition",
          n.op_type(), opset_, n.op_type(), old->since_version());
  });
  if (!refused.empty()) fail(refused);
}

std::string Importer::unique_node_name(const onnx::NodeProto& n, int index) {
  std::string base = n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name();
  std::string name = base;
  for (int k = 1; node_names_.contains(name); ++k) name = fmt::format("{}_{}", base, k);
  node_names_.insert(name);
  return name;
}

bool Importer::has_input(const onnx::NodeProto& n, int i) const {
  return i < n.input_size() && !n.input(i).empty();
}

ValueId Importer::input(const onnx::NodeProto& n, int i) const {
  if (!has_input(n, i)) fail(fmt::format("input {} is missing", i));
  const auto it = values_.find(n.input(i));
  if (const CompositeValue* c = composite_named(n.input(i)))
    fail(fmt::format("input {} ('{}') is {}, where a tensor is expected", i, n.input(i),
                     c->kind == CompositeValue::Kind::kSequence ? "a sequence" : "an optional"));
  if (it == values_.end())
    fail(
        fmt::format("input '{}' is not produced by an earlier node, an initializer or a graph "
                    "input",
                    n.input(i)));
  return it->second;
}

ConstantData Importer::known_value(ValueId id) const {
  const Value& v = graph_.value(id);
  if (v.is_constant()) return v.constant;
  if (options_.input_values.empty()) return nullptr;
  if (const auto it = known_.find(id); it != known_.end()) return it->second;
  ConstantData out;
  if (v.producer == kNone) {  // a graph input: its value if given, of its type
    const auto it = options_.input_values.find(v.name);
    if (it == options_.input_values.end() || !(it->second.type == v.type)) return nullptr;
    // Only small inputs (scales, k, axes, a sample rate) specialise the
    // graph: a condition on the data itself (an image, audio) stays a
    // run-time select, or a cached model would re-plan for every input.
    if (element_count(v.type.shape) > kMaxSpecialisingElements) return nullptr;
    out = std::make_shared<const std::vector<std::byte>>(it->second.data);
    if (std::find(specialised_on_.begin(), specialised_on_.end(), v.name) == specialised_on_.end())
      specialised_on_.push_back(v.name);
  } else {
    const Node& node = graph_.node(v.producer);
    std::vector<ConstantInput> ins;
    for (ValueId in : node.inputs) {
      ConstantData d = known_value(in);
      if (!d) return nullptr;
      ins.push_back({graph_.value(in).type, std::move(d)});
    }
    std::vector<TensorType> types;
    for (ValueId o : node.outputs) types.push_back(graph_.value(o).type);
    std::vector<std::vector<std::byte>> data;
    try {
      data = evaluate_constant_node(node.op, node.attrs, ins, types, node.name);
    } catch (const std::exception& e) {
      fail(
          fmt::format("cannot evaluate '{}' from the given input values: {}", v.name, describe(e)));
    }
    for (size_t k = 0; k < node.outputs.size(); ++k)
      known_[node.outputs[k]] = std::make_shared<const std::vector<std::byte>>(std::move(data[k]));
    out = known_.at(id);
  }
  known_[id] = out;
  return out;
}

ConstantData Importer::required_value(const onnx::NodeProto& n, int i, const char* what) const {
  ConstantData known = known_value(input(n, i));
  if (!known)
    fail_needs_value(fmt::format(
        "{} ('{}') must be a constant (after folding), but it is computed at run time{}", what,
        n.input(i),
        options_.input_values.empty()
            ? " (give the model's inputs with --input to build the graph for their values)"
            : fmt::format(" from an input whose value is not given (or has more than {} elements)",
                          kMaxSpecialisingElements)));
  return known;
}

ConstantData Importer::value_for_output_shape(const onnx::NodeProto& n, int i,
                                              const char* what) const {
  ConstantData known = known_value(input(n, i));
  if (!known)
    fail_needs_value(fmt::format(
        "{} ('{}') is computed at run time: {}'s output shape depends on its values, and ampx "
        "plans fixed shapes (a constant, a value that folds, or a graph input of at most {} "
        "elements given per run is supported)",
        what, n.input(i), n.op_type(), kMaxSpecialisingElements));
  return known;
}

std::vector<int64_t> Importer::const_ints(const onnx::NodeProto& n, int i, const char* what) const {
  const Value& v = graph_.value(input(n, i));
  const ConstantData known = required_value(n, i, what);
  const auto count = static_cast<size_t>(element_count(v.type.shape));
  std::vector<int64_t> out(count);
  const std::byte* p = known->data();
  for (size_t k = 0; k < count; ++k) {
    if (v.type.dtype == DType::kI64) {
      std::memcpy(&out[k], p + 8 * k, 8);
    } else if (v.type.dtype == DType::kI32) {
      int32_t x;
      std::memcpy(&x, p + 4 * k, 4);
      out[k] = x;
    } else {
      fail(fmt::format("{} ('{}') must be an integer tensor, got {}", what, n.input(i),
                       dtype_name(v.type.dtype)));
    }
  }
  return out;
}

std::vector<double> Importer::const_floats(const onnx::NodeProto& n, int i,
                                           const char* what) const {
  const Value& v = graph_.value(input(n, i));
  // i64/i32 read as integers first (const_ints: exact, and its message for
  // any other non-integer type); the other integer types through a double.
  if (!is_float(v.type.dtype) &&
      (!is_integer(v.type.dtype) || v.type.dtype == DType::kI64 || v.type.dtype == DType::kI32)) {
    const auto ints = const_ints(n, i, what);
    return {ints.begin(), ints.end()};
  }
  const ConstantData known = required_value(n, i, what);
  HostTensor t{"", v.type, *known};
  return to_doubles(t);
}

double Importer::const_scalar(const onnx::NodeProto& n, int i, const char* what) const {
  const auto values = const_floats(n, i, what);
  if (values.size() != 1)
    fail(fmt::format("{} ('{}') must hold one value, it has {}", what, n.input(i), values.size()));
  return values[0];
}

bool Importer::output_used(const onnx::NodeProto& n, int i) const {
  if (i >= n.output_size() || n.output(i).empty()) return false;
  const auto it = uses_.find(n.output(i));
  return it != uses_.end() && it->second > 0;
}

std::optional<int64_t> Importer::attr_int(const onnx::NodeProto& n, const char* name) const {
  const auto* a = find_attr(n, name);
  if (!a) return std::nullopt;
  if (a->type() != onnx::AttributeProto::INT)
    fail(fmt::format("attribute '{}' is not an int", name));
  return a->i();
}

std::optional<float> Importer::attr_float(const onnx::NodeProto& n, const char* name) const {
  const auto* a = find_attr(n, name);
  if (!a) return std::nullopt;
  if (a->type() != onnx::AttributeProto::FLOAT)
    fail(fmt::format("attribute '{}' is not a float", name));
  return a->f();
}

std::optional<std::vector<int64_t>> Importer::attr_ints(const onnx::NodeProto& n,
                                                        const char* name) const {
  const auto* a = find_attr(n, name);
  if (!a) return std::nullopt;
  if (a->type() != onnx::AttributeProto::INTS)
    fail(fmt::format("attribute '{}' is not a list of ints", name));
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<float>> Importer::attr_floats(const onnx::NodeProto& n,
                                                        const char* name) const {
  const auto* a = find_attr(n, name);
  if (!a) return std::nullopt;
  if (a->type() != onnx::AttributeProto::FLOATS)
    fail(fmt::format("attribute '{}' is not a list of floats", name));
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::optional<std::string> Importer::attr_string(const onnx::NodeProto& n, const char* name) const {
  const auto* a = find_attr(n, name);
  if (!a) return std::nullopt;
  if (a->type() != onnx::AttributeProto::STRING)
    fail(fmt::format("attribute '{}' is not a string", name));
  return a->s();
}

const onnx::TensorProto* Importer::attr_tensor(const onnx::NodeProto& n, const char* name) const {
  const auto* a = find_attr(n, name);
  if (!a) return nullptr;
  if (a->type() != onnx::AttributeProto::TENSOR)
    fail(fmt::format("attribute '{}' is not a tensor", name));
  return &a->t();
}

std::vector<ValueId> Importer::emit(std::string_view op_name, std::vector<ValueId> inputs,
                                    AttrMap attrs) {
  const auto op = parse_op(op_name);
  if (!op) fail(fmt::format("IR op {} is not in this build", op_name));
  std::vector<TensorType> in_types;
  bool all_constant = !inputs.empty();
  for (ValueId v : inputs) {
    in_types.push_back(graph_.value(v).type);
    all_constant = all_constant && graph_.value(v).is_constant();
  }
  const std::string name =
      emitted_ == 0 ? node_name_ : fmt::format("{}/{}{}", node_name_, op_name, emitted_);
  ++emitted_;
  std::vector<TensorType> out_types;
  try {
    out_types = infer_output_types(*op, in_types, attrs, name);
  } catch (const GraphError& e) {
    fail_in(name, op_name, e.what());
  }
  for (size_t i = 0; i < out_types.size(); ++i)
    check_size(out_types[i], name == node_name_
                                 ? fmt::format("output {}", i)
                                 : fmt::format("output {} of IR {} '{}'", i, op_name, name));
  std::vector<ValueId> outs;
  if (all_constant) {
    std::vector<ConstantInput> cins;
    for (ValueId v : inputs) cins.push_back({graph_.value(v).type, graph_.value(v).constant});
    std::vector<std::vector<std::byte>> data;
    try {
      data = evaluate_constant_node(*op, attrs, cins, out_types, name);
    } catch (const std::exception& e) {
      fail_in(name, op_name,
              "cannot fold it at import: " + without_node_prefix(describe(e), name, op_name));
    }
    for (size_t i = 0; i < out_types.size(); ++i) {
      outs.push_back(
          graph_.add_constant(fmt::format("{}:{}", name, i), out_types[i], std::move(data[i])));
      fresh_.insert(outs.back());
    }
    ++stats_.folded_nodes;
    return outs;
  }
  const NodeId id = graph_.add_node(name, *op, std::move(inputs), out_types, std::move(attrs));
  graph_.node(id).origin = origin_;
  graph_.node(id).keep_f32 = keep_f32_;
  for (ValueId v : graph_.node(id).outputs) {
    graph_.value(v).name = fmt::format("{}:{}", name, outs.size());
    outs.push_back(v);
    fresh_.insert(v);
  }
  return outs;
}

ValueId Importer::constant(TensorType type, std::vector<std::byte> bytes) {
  check_size(type, "constant");
  ++stats_.folded_nodes;
  const ValueId v = graph_.add_constant(fmt::format("{}:c{}", node_name_, emitted_++),
                                        std::move(type), std::move(bytes));
  fresh_.insert(v);
  return v;
}

ValueId Importer::constant_i64(std::span<const int64_t> values, Shape shape) {
  std::vector<std::byte> bytes(values.size() * 8);
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return constant({DType::kI64, std::move(shape)}, std::move(bytes));
}

void Importer::bind(const onnx::NodeProto& n, int i, ValueId v) {
  if (i >= n.output_size() || n.output(i).empty()) return;
  // A value made by this node takes the ONNX output's name; an alias
  // (Identity, Dropout) keeps its producer's.
  if (fresh_.contains(v)) graph_.value(v).name = n.output(i) + value_suffix_;
  composites_.erase(n.output(i));
  values_[n.output(i)] = v;
}

void Importer::convert_nodes() {
  const auto& g = model_.graph();
  // A value read inside a subgraph (an If branch reads outer values by
  // name) is used too; so are a subgraph's outputs.
  for_each_node(g, [&](const onnx::NodeProto& n) {
    for (const auto& in : n.input()) uses_[in]++;
    for (const auto& a : n.attribute()) {
      if (a.has_g())
        for (const auto& out : a.g().output()) uses_[out.name()]++;
      for (const auto& sub : a.graphs())
        for (const auto& out : sub.output()) uses_[out.name()]++;
    }
  });
  for (const auto& out : g.output()) uses_[out.name()]++;
  convert_graph_nodes(g);
  node_ = nullptr;
}

void Importer::convert_graph_nodes(const onnx::GraphProto& g) {
  // ONNX graphs are in SSA form: every name is written once. A second
  // writer would silently replace the first one's value for later readers.
  std::unordered_map<std::string, std::string> writer;  // value name -> what writes it
  for (const auto& in : g.input()) writer.emplace(in.name(), "as a graph input");
  for (const auto& t : g.initializer()) writer.emplace(t.name(), "as an initializer");
  for (const auto& n : g.node()) {
    node_ = &n;
    node_name_ = unique_node_name(n, stats_.onnx_nodes++);
    origin_.clear();
    keep_f32_ = keep_f32_nodes_.contains(n.name());
    emitted_ = 0;
    fresh_.clear();
    // Every op of the default domain has an output; a converter may read
    // the first one's name without asking.
    if (n.output_size() < 1) fail("has no outputs");
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      const auto [it, fresh] =
          writer.emplace(out, fmt::format("by '{}' ({})", node_name_, n.op_type()));
      if (!fresh) fail(fmt::format("output '{}' is written twice: also {}", out, it->second));
    }
    convert_node(n);
    for (int i = 0; i < n.output_size(); ++i)
      if (!n.output(i).empty() && !has_value(n.output(i)) && output_used(n, i))
        fail(fmt::format("output {} ('{}') is not supported", i, n.output(i)));
  }
}

std::vector<ValueId> Importer::inline_subgraph(const onnx::GraphProto& g, const std::string& what,
                                               std::span<const ValueId> inputs,
                                               const std::string& suffix) {
  const std::vector<HeldValue> held =
      inline_subgraph_held(g, what, std::vector<HeldValue>(inputs.begin(), inputs.end()), suffix);
  std::vector<ValueId> outs;
  for (size_t i = 0; i < held.size(); ++i) {
    if (!std::holds_alternative<ValueId>(held[i]))
      fail(fmt::format("{}: output '{}' is a sequence or optional, where a tensor is expected",
                       what, g.output(static_cast<int>(i)).name()));
    outs.push_back(std::get<ValueId>(held[i]));
  }
  return outs;
}

std::vector<HeldValue> Importer::inline_subgraph_held(const onnx::GraphProto& g,
                                                      const std::string& what,
                                                      std::span<const HeldValue> inputs,
                                                      const std::string& suffix) {
  // The converting node's state, restored when the branch is done or has
  // failed (an If may go on without a branch that cannot be built).
  struct Restore {
    Importer& im;
    const onnx::NodeProto* node = im.node_;
    std::string name = im.node_name_, origin = im.origin_;
    bool keep_f32 = im.keep_f32_;
    int emitted = im.emitted_;
    // Moved, not copied: every node of the subgraph starts by clearing it,
    // and a copy per inlined iteration made unrolling quadratic in the
    // nodes the enclosing Loop had emitted so far.
    std::unordered_set<ValueId> fresh = std::exchange(im.fresh_, {});
    std::string value_suffix = im.value_suffix_;
    ~Restore() {
      im.value_suffix_ = std::move(value_suffix);
      im.node_ = node;
      im.node_name_ = std::move(name);
      im.origin_ = std::move(origin);
      im.keep_f32_ = keep_f32;
      im.emitted_ = emitted;
      im.fresh_ = std::move(fresh);
    }
  };
  // The subgraph's own names shadow the outer graph's only inside it: an
  // outer value of a name the subgraph defines too ("scores", "x") is the
  // outer one again after it (nodes after the If or FlexAttention read it),
  // tensor or sequence alike. Restored on failure too (an If goes on
  // without a branch that fails).
  struct Unshadow {
    Importer& im;
    struct Saved {
      std::string name;
      std::optional<ValueId> value;
      std::optional<CompositeValue> composite;
    };
    std::vector<Saved> saved;
    ~Unshadow() {
      // In reverse: a name defined twice gets its first (outer) value back.
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        if (it->value)
          im.values_[it->name] = *it->value;
        else
          im.values_.erase(it->name);
        if (it->composite)
          im.composites_[it->name] = *it->composite;
        else
          im.composites_.erase(it->name);
      }
    }
  } unshadow{*this, {}};
  const auto shadow = [&](const std::string& name) {
    if (name.empty()) return;
    Unshadow::Saved s{name, std::nullopt, std::nullopt};
    if (const auto it = values_.find(name); it != values_.end()) s.value = it->second;
    if (const auto it = composites_.find(name); it != composites_.end()) s.composite = it->second;
    unshadow.saved.push_back(std::move(s));
  };
  for (const auto& in : g.input()) shadow(in.name());
  for (const auto& t : g.initializer()) shadow(t.name());
  for (const auto& node : g.node())
    for (const auto& out : node.output()) shadow(out);
  std::vector<HeldValue> outs;
  {
    const Restore restore{*this};
    value_suffix_ += suffix;
    if (static_cast<size_t>(g.input_size()) != inputs.size())
      fail(fmt::format("{} has {} inputs, expected {}", what, g.input_size(), inputs.size()));
    for (int i = 0; i < g.input_size(); ++i) {
      const std::string& name = g.input(i).name();
      if (name.empty()) fail(fmt::format("{}: input {} has no name", what, i));
      const HeldValue& in = inputs[static_cast<size_t>(i)];
      if (const auto* c = std::get_if<CompositeValue>(&in)) {
        values_.erase(name);
        composites_[name] = *c;
      } else {
        composites_.erase(name);
        values_[name] = std::get<ValueId>(in);
      }
    }
    for (const auto& t : g.initializer()) {
      if (t.name().empty()) fail(what + ": an initializer has no name");
      const auto key = std::make_pair(&g, t.name());
      if (const auto it = subgraph_constants_.find(key); it != subgraph_constants_.end()) {
        values_[t.name()] = it->second;
        continue;
      }
      TensorData d = read_tensor(t, base_dir_, where_tensor(t.name()), max_tensor_bytes_);
      // Suffixed: two subgraphs (two FlexAttention nodes' modifiers) may
      // name their initializers alike.
      values_[t.name()] = subgraph_constants_[key] =
          graph_.add_constant(t.name() + value_suffix_, d.type, std::move(d.bytes));
    }
    convert_graph_nodes(g);
  }
  for (const auto& o : g.output()) {
    if (const CompositeValue* c = composite_named(o.name())) {
      outs.emplace_back(*c);
      continue;
    }
    const auto it = values_.find(o.name());
    if (it == values_.end())
      fail(fmt::format("{}: output '{}' is not produced by the branch or an outer value", what,
                       o.name()));
    outs.emplace_back(it->second);
  }
  return outs;
}

// The converter's own checks name what is wrong; anything else that escapes
// (an allocation, a library precondition) still becomes one line naming the
// node.
void Importer::convert_node(const onnx::NodeProto& n) {
  // check_supported() ran first
  const OpConverter* conv = find_converter(n.domain(), n.op_type());
  try {
    conv->convert(*this, n);
  } catch (const OnnxError&) {
    throw;
  } catch (const std::exception& e) {
    fail(fmt::format("cannot be imported: {}", describe(e)));
  }
}

// A graph output that no node of the graph computes (a constant: Shape,
// Size, Constant, a folded subgraph; a graph input passed through
// Identity or Dropout; a tensor that is another output too) becomes the
// output of a copy, a Reshape to its own shape that every device runs: an
// output is a node's, named as the model names it, and a graph input keeps
// its own name.
ValueId Importer::output_copy(ValueId v, const std::string& output) {
  std::string name = output + "/copy";
  for (int k = 1; node_names_.contains(name); ++k) name = fmt::format("{}/copy_{}", output, k);
  node_names_.insert(name);
  const TensorType type = graph_.value(v).type;
  // The value took the output's name when its node bound it.
  if (graph_.value(v).name == output) graph_.value(v).name = output + "/value";
  const NodeId id =
      graph_.add_node(name, OpType::kReshape, {v}, {type},
                      {{"shape", std::vector<int64_t>(type.shape.begin(), type.shape.end())}});
  graph_.node(id).origin = "Identity";
  return graph_.node(id).outputs[0];
}

void Importer::bind_outputs() {
  std::unordered_set<ValueId> seen;
  std::unordered_set<std::string> input_names;
  for (ValueId in : graph_.inputs()) input_names.insert(graph_.value(in).name);
  for (const auto& out : model_.graph().output()) {
    if (input_names.contains(out.name()))
      fail(fmt::format("graph output '{}' is also the name of a graph input", out.name()));
    if (const CompositeValue* c = composite_named(out.name())) {
      bind_composite_output(out.name(), *c, seen);
      continue;
    }
    const auto it = values_.find(out.name());
    if (it == values_.end())
      fail(fmt::format("graph output '{}' is not produced by any node", out.name()));
    add_output(it->second, out.name(), seen);
  }
  if (graph_.outputs().empty())
    fail("the graph has no outputs (or only empty sequences and optionals holding none)");
}

void Importer::add_output(ValueId v, const std::string& name, std::unordered_set<ValueId>& seen) {
  const Value& val = graph_.value(v);
  if (val.is_constant() || val.producer == kNone || seen.contains(v)) v = output_copy(v, name);
  seen.insert(v);
  graph_.value(v).name = name;
  graph_.add_output(v);
}

Graph Importer::run(ImportStats* stats) {
  load();
  read_opset();
  graph_.name = model_.graph().name().empty() ? path_.stem().string() : model_.graph().name();
  check_supported();
  read_initializers();
  read_inputs();
  convert_nodes();
  bind_outputs();
  Graph out = finish();
  if (stats) *stats = stats_;
  return out;
}

Graph Importer::finish() {
  stats_.fused_patterns = fuse_decomposed_patterns(graph_);
  Graph out = remove_dead_nodes(graph_);
  out.specialised_on = specialised_on_;
  stats_.specialised_on = specialised_on_;
  stats_.ir_nodes = static_cast<int>(out.num_nodes());
  try {
    verify_graph_or_throw(out);
  } catch (const GraphError& e) {
    fail(e.what());
  }
  return out;
}

Graph import_onnx(const fs::path& path, const ImportOptions& options, ImportStats* stats) {
  return Importer(path, options).run(stats);
}

}  // namespace ampx::onnx_io
