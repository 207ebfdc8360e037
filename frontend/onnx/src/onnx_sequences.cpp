// ONNX's sequence and optional ops as list operations at import
// (composite_value.hpp; docs/ONNX.md, "Sequences and optionals"). A
// sequence is the list of its elements' IR values, so SequenceInsert, At,
// Erase and Length need their positions at import (constants, or small
// graph inputs whose values a run gives, as a Reshape's shape); only
// ConcatFromSequence and SplitToSequence emit IR nodes (Concat, Split,
// Reshape), and SequenceMap inlines its body once per element, as Loop
// does its iterations.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;
using I = Importer;
using Kind = CompositeValue::Kind;

// The elements a sequence may hold: each is an IR value (a SplitToSequence
// of a long axis into ones would make one per index), as loops unroll to
// at most 4096 iterations.
constexpr int64_t kMaxSequenceLength = 4096;

void check_length(I& im, int64_t length) {
  if (length > kMaxSequenceLength)
    im.fail(
        fmt::format("the sequence would hold {} tensors; ampx keeps sequences at import, up "
                    "to {} tensors",
                    length, kMaxSequenceLength));
}

// Input i as a sequence (an optional holding one is not: OptionalGetElement
// comes first in ONNX).
const CompositeValue& sequence_input(I& im, const N& n, int i) {
  const CompositeValue& c = im.composite_input(n, i, "the sequence");
  if (c.kind != Kind::kSequence)
    im.fail(
        fmt::format("input {} ('{}') is an optional, where a sequence is expected", i, n.input(i)));
  return c;
}

// A position input in [-length, length + extra) as an index from the front.
int64_t position(I& im, const N& n, int i, int64_t length, int64_t extra) {
  const auto p = im.const_ints(n, i, "the position");
  if (p.size() != 1) im.fail(fmt::format("the position must hold one value, it has {}", p.size()));
  const int64_t at = p[0] < 0 ? p[0] + length : p[0];
  if (at < 0 || at >= length + extra)
    im.fail(fmt::format("position {} is out of range for a sequence of {} tensors", p[0], length));
  return at;
}

void check_dtype(I& im, const CompositeValue& seq, ValueId v, const char* what) {
  const DType dt = im.type(v).dtype;
  const DType want = seq.elements.empty() ? seq.dtype : im.type(seq.elements[0]).dtype;
  if (want != DType::kInvalid && dt != want)
    im.fail(fmt::format("{} is {}, the sequence holds {}", what, dtype_name(dt), dtype_name(want)));
}

void sequence_empty(I& im, const N& n) {
  const auto elem = static_cast<int32_t>(im.attr_int_or(n, "dtype", onnx::TensorProto::FLOAT));
  const auto dt = dtype_from_onnx(elem);
  if (!dt) im.fail(fmt::format("dtype {} is not an ampx type", onnx_elem_type_name(elem)));
  im.bind_composite(n, 0, CompositeValue{.kind = Kind::kSequence, .elements = {}, .dtype = *dt});
}

void sequence_construct(I& im, const N& n) {
  CompositeValue seq;
  for (int i = 0; i < n.input_size(); ++i) {
    const ValueId v = im.input(n, i);
    if (i > 0 && im.type(v).dtype != im.type(seq.elements[0]).dtype)
      im.fail(fmt::format("input {} is {}, input 0 is {}: a sequence holds one type", i,
                          dtype_name(im.type(v).dtype),
                          dtype_name(im.type(seq.elements[0]).dtype)));
    seq.elements.push_back(v);
  }
  check_length(im, static_cast<int64_t>(seq.elements.size()));
  if (!seq.elements.empty()) seq.dtype = im.type(seq.elements[0]).dtype;
  im.bind_composite(n, 0, std::move(seq));
}

void sequence_insert(I& im, const N& n) {
  CompositeValue seq = sequence_input(im, n, 0);
  const ValueId v = im.input(n, 1);
  check_dtype(im, seq, v, "the tensor");
  const auto length = static_cast<int64_t>(seq.elements.size());
  const int64_t at = im.has_input(n, 2) ? position(im, n, 2, length, 1) : length;
  check_length(im, length + 1);
  seq.elements.insert(seq.elements.begin() + at, v);
  seq.dtype = im.type(v).dtype;
  im.bind_composite(n, 0, std::move(seq));
}

void sequence_at(I& im, const N& n) {
  const CompositeValue& seq = sequence_input(im, n, 0);
  const auto length = static_cast<int64_t>(seq.elements.size());
  im.bind(n, 0, seq.elements[static_cast<size_t>(position(im, n, 1, length, 0))]);
}

void sequence_erase(I& im, const N& n) {
  CompositeValue seq = sequence_input(im, n, 0);
  const auto length = static_cast<int64_t>(seq.elements.size());
  if (length == 0) im.fail("erases from an empty sequence");
  const int64_t at = im.has_input(n, 1) ? position(im, n, 1, length, 0) : length - 1;
  seq.elements.erase(seq.elements.begin() + at);
  im.bind_composite(n, 0, std::move(seq));
}

void sequence_length(I& im, const N& n) {
  const auto length = static_cast<int64_t>(sequence_input(im, n, 0).elements.size());
  im.bind(n, 0, im.constant_i64(std::vector<int64_t>{length}, Shape{}));
}

// Concat along `axis`, or, new_axis = 1, a stack along a new one.
void concat_from_sequence(I& im, const N& n) {
  const CompositeValue& seq = sequence_input(im, n, 0);
  if (seq.elements.empty())
    im.fail("concatenates an empty sequence; ampx has no tensor of unknown shape");
  const auto axis_attr = im.attr_int(n, "axis");
  if (!axis_attr) im.fail("attribute 'axis' is required");
  const int64_t new_axis = im.attr_int_or(n, "new_axis", 0);
  if (new_axis != 0 && new_axis != 1)
    im.fail(fmt::format("new_axis is {}, expected 0 or 1", new_axis));
  const int64_t rank = rank_of(im, seq.elements[0]);
  const int64_t axis = norm_axis(im, *axis_attr, rank + new_axis);
  std::vector<ValueId> parts;
  for (ValueId v : seq.elements) {
    if (rank_of(im, v) != rank)
      im.fail(fmt::format("the sequence holds tensors of ranks {} and {}", rank, rank_of(im, v)));
    if (!new_axis) {
      parts.push_back(v);
      continue;
    }
    const Shape s = im.type(v).shape;
    std::vector<int64_t> shape(s.begin(), s.end());
    shape.insert(shape.begin() + axis, 1);
    parts.push_back(im.emit1("Reshape", {v}, {{"shape", shape}}));
  }
  im.bind(n, 0, parts.size() == 1 ? parts[0] : im.emit1("Concat", parts, {{"axis", axis}}));
}

// The parts' sizes: `split` absent, ones; a scalar, chunks of it (the last
// smaller); a 1-D tensor, those sizes.
std::vector<int64_t> split_sizes(I& im, const N& n, int64_t dim) {
  if (!im.has_input(n, 1)) return std::vector<int64_t>(static_cast<size_t>(dim), 1);
  const auto split = im.const_ints(n, 1, "split");
  if (rank_of(im, im.input(n, 1)) == 0) {
    const int64_t chunk = split[0];
    if (chunk <= 0) im.fail(fmt::format("split is {}, expected a positive chunk size", chunk));
    check_length(im, dim / chunk + 1);
    std::vector<int64_t> sizes;
    for (int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
    return sizes;
  }
  int64_t total = 0;
  for (int64_t s : split) {
    if (s < 0) im.fail(fmt::format("split holds a negative size, {}", s));
    total += std::min(s, dim + 1);  // no overflow; a sum past dim fails below
  }
  if (total != dim)
    im.fail(fmt::format("the split sizes add up to {}, the axis has {}", total, dim));
  return split;
}

void split_to_sequence(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const int64_t rank = rank_of(im, x);
  const int64_t axis = norm_axis(im, im.attr_int_or(n, "axis", 0), rank);
  const Shape shape = im.type(x).shape;  // a copy: emit() adds values
  const int64_t dim = shape[static_cast<size_t>(axis)];
  check_length(im, dim);
  const std::vector<int64_t> sizes = split_sizes(im, n, dim);
  check_length(im, static_cast<int64_t>(sizes.size()));
  if (std::count(sizes.begin(), sizes.end(), 0) > 0)
    im.fail("a part of size 0 is an empty tensor, which ampx does not have");
  CompositeValue seq{.kind = Kind::kSequence, .elements = {}, .dtype = im.type(x).dtype};
  if (!sizes.empty())
    seq.elements = sizes.size() == 1 ? std::vector<ValueId>{x}
                                     : im.emit("Split", {x}, {{"axis", axis}, {"split", sizes}});
  // keepdims = 0 drops the axis, only where `split` is absent (parts of 1).
  if (!im.has_input(n, 1) && im.attr_int_or(n, "keepdims", 1) == 0) {
    std::vector<int64_t> squeezed(shape.begin(), shape.end());
    squeezed.erase(squeezed.begin() + axis);
    for (ValueId& v : seq.elements) v = im.emit1("Reshape", {v}, {{"shape", squeezed}});
  }
  im.bind_composite(n, 0, std::move(seq));
}

// SequenceMap: the body once per element of the first input; the other
// inputs give their element of that index (sequences of its length) or
// themselves (tensors). Body output k's values make output sequence k.
void sequence_map(I& im, const N& n) {
  const onnx::GraphProto* body = nullptr;
  for (const auto& a : n.attribute())
    if (a.name() == "body" && a.type() == onnx::AttributeProto::GRAPH && a.has_g()) body = &a.g();
  if (!body) im.fail("attribute 'body' (a graph) is required");
  const int64_t length = static_cast<int64_t>(sequence_input(im, n, 0).elements.size());
  std::vector<HeldValue> ins;
  for (int i = 0; i < n.input_size(); ++i) {
    ins.push_back(im.held_input(n, i));
    if (const auto* c = std::get_if<CompositeValue>(&ins.back())) {
      if (c->kind != Kind::kSequence)
        im.fail(fmt::format("input {} is an optional, where a sequence or tensor is expected", i));
      if (static_cast<int64_t>(c->elements.size()) != length)
        im.fail(
            fmt::format("input {} holds {} tensors, input 0 {}", i, c->elements.size(), length));
    }
  }
  if (body->output_size() != n.output_size())
    im.fail(
        fmt::format("the body has {} outputs, the node {}", body->output_size(), n.output_size()));
  std::vector<CompositeValue> outs(static_cast<size_t>(n.output_size()));
  for (int64_t k = 0; k < length; ++k) {
    check_nodes_so_far(im, k);  // nested SequenceMaps and Loops multiply
    std::vector<ValueId> args;
    for (const HeldValue& in : ins)
      args.push_back(std::holds_alternative<ValueId>(in)
                         ? std::get<ValueId>(in)
                         : std::get<CompositeValue>(in).elements[static_cast<size_t>(k)]);
    const std::vector<ValueId> got =
        im.inline_subgraph(*body, fmt::format("body (element {})", k), args, fmt::format("@{}", k));
    for (size_t j = 0; j < got.size(); ++j) outs[j].elements.push_back(got[j]);
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    if (!outs[j].elements.empty()) outs[j].dtype = im.type(outs[j].elements[0]).dtype;
    im.bind_composite(n, static_cast<int>(j), std::move(outs[j]));
  }
}

// Optional(x): holds x; Optional() with a `type`: holds none of that type.
void optional(I& im, const N& n) {
  CompositeValue opt{.kind = Kind::kOptionalTensor, .elements = {}};
  if (im.has_input(n, 0)) {
    HeldValue x = im.held_input(n, 0);
    if (auto* c = std::get_if<CompositeValue>(&x)) {
      if (c->kind != Kind::kSequence) im.fail("an optional of an optional is not an ONNX type");
      opt = std::move(*c);
      opt.kind = Kind::kOptionalSequence;
    } else {
      opt.elements = {std::get<ValueId>(x)};
      opt.dtype = im.type(opt.elements[0]).dtype;
    }
    return im.bind_composite(n, 0, std::move(opt));
  }
  const onnx::TypeProto* type = nullptr;
  for (const auto& a : n.attribute())
    if (a.name() == "type" && a.type() == onnx::AttributeProto::TYPE_PROTO) type = &a.tp();
  if (!type) im.fail("has neither an input nor the attribute 'type'");
  if (type->has_sequence_type())
    opt.kind = Kind::kOptionalSequence;
  else if (!type->has_tensor_type())
    im.fail("attribute 'type' is neither a tensor nor a sequence");
  opt.present = false;
  im.bind_composite(n, 0, std::move(opt));
}

// OptionalHasElement: false for no input (opset 18+ allows it), true for a
// tensor or sequence, an optional's presence otherwise: a constant.
void optional_has_element(I& im, const N& n) {
  bool has = false;
  if (im.has_input(n, 0)) {
    const HeldValue x = im.held_input(n, 0);
    const auto* c = std::get_if<CompositeValue>(&x);
    has = !c || !c->is_optional() || c->present;
  }
  im.bind(n, 0, im.constant({DType::kBool, {}}, {std::byte{has ? uint8_t{1} : uint8_t{0}}}));
}

// OptionalGetElement: an optional's value (none is an error: ONNX Runtime
// fails the run too); a tensor or sequence (opset 18+) passes through.
void optional_get_element(I& im, const N& n) {
  HeldValue x = im.held_input(n, 0);
  if (auto* c = std::get_if<CompositeValue>(&x); c && c->is_optional()) {
    if (!c->present) im.fail(fmt::format("the optional '{}' holds none", n.input(0)));
    if (c->kind == Kind::kOptionalTensor) return im.bind(n, 0, c->elements.at(0));
    c->kind = Kind::kSequence;
  }
  im.bind_held(n, 0, std::move(x));
}

}  // namespace

void sequence_op(Importer& im, const onnx::NodeProto& n) {
  using Convert = void (*)(I&, const N&);
  static const std::pair<const char*, Convert> kOps[] = {
      {"SequenceEmpty", sequence_empty},
      {"SequenceConstruct", sequence_construct},
      {"SequenceInsert", sequence_insert},
      {"SequenceAt", sequence_at},
      {"SequenceErase", sequence_erase},
      {"SequenceLength", sequence_length},
      {"ConcatFromSequence", concat_from_sequence},
      {"SplitToSequence", split_to_sequence},
      {"SequenceMap", sequence_map},
      {"Optional", optional},
      {"OptionalHasElement", optional_has_element},
      {"OptionalGetElement", optional_get_element},
  };
  for (const auto& [name, convert] : kOps)
    if (n.op_type() == name) return convert(im, n);
  im.fail("is not a sequence or optional op");
}

}  // namespace ampx::onnx_io
