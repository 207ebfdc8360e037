// Sequences and optionals where they meet the graph's edges and the other
// converters (composite_value.hpp; docs/ONNX.md, "Sequences and
// optionals"): a sequence or optional graph input becomes tensor inputs as
// ImportOptions::composite_inputs says for this run, a graph output holding
// one becomes its tensors as outputs, and converters read and bind either
// kind of value by name.
#include <fmt/format.h>

#include "importer.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {

std::string sequence_element_name(std::string_view name, int64_t index) {
  return fmt::format("{}[{}]", name, index);
}

const CompositeValue* Importer::composite_named(const std::string& name) const {
  const auto it = composites_.find(name);
  return it == composites_.end() ? nullptr : &it->second;
}

const CompositeValue& Importer::composite_input(const onnx::NodeProto& n, int i,
                                                const char* what) const {
  if (!has_input(n, i)) fail(fmt::format("{} (input {}) is missing", what, i));
  const CompositeValue* c = composite_named(n.input(i));
  if (!c) {
    if (values_.contains(n.input(i)))
      fail(fmt::format("{} ('{}') is a tensor, where a sequence or optional is expected", what,
                       n.input(i)));
    (void)input(n, i);  // its message for a name nothing produces
  }
  return *c;
}

HeldValue Importer::held_input(const onnx::NodeProto& n, int i) const {
  if (has_input(n, i))
    if (const CompositeValue* c = composite_named(n.input(i))) return *c;
  return input(n, i);
}

void Importer::bind_composite(const onnx::NodeProto& n, int i, CompositeValue v) {
  if (i >= n.output_size() || n.output(i).empty()) return;
  values_.erase(n.output(i));
  composites_[n.output(i)] = std::move(v);
}

void Importer::bind_held(const onnx::NodeProto& n, int i, HeldValue v) {
  if (auto* c = std::get_if<CompositeValue>(&v))
    bind_composite(n, i, std::move(*c));
  else
    bind(n, i, std::get<ValueId>(v));
}

// A sequence input of length n is the tensor inputs NAME[0] ... NAME[n-1]
// of the element's declared type (their shapes pinned per run as any
// input's); an optional one holds none, its tensor (an input of its own
// name) or a sequence so given.
void Importer::read_composite_input(const onnx::ValueInfoProto& in,
                                    std::vector<std::string>& names) {
  const std::string& name = in.name();
  const CompositeInputs& given = options_.composite_inputs;
  CompositeValue c;
  const onnx::TypeProto* elem = nullptr;
  if (in.type().has_sequence_type()) {
    elem = &in.type().sequence_type().elem_type();
  } else {
    const onnx::TypeProto& held = in.type().optional_type().elem_type();
    c.present = !given.absent.contains(name);
    if (held.has_tensor_type()) {
      c.kind = CompositeValue::Kind::kOptionalTensor;
      if (auto dt = dtype_from_onnx(held.tensor_type().elem_type())) c.dtype = *dt;
      if (c.present) {
        names.push_back(name);
        c.elements.push_back(add_tensor_input(name, held.tensor_type()));
      }
      composites_[name] = std::move(c);
      return;
    }
    if (!held.has_sequence_type())
      fail(fmt::format("input '{}' is an optional of neither a tensor nor a sequence", name));
    c.kind = CompositeValue::Kind::kOptionalSequence;
    elem = &held.sequence_type().elem_type();
  }
  if (!elem->has_tensor_type())
    fail(fmt::format("input '{}' is a sequence of {}: ampx takes sequences of tensors", name,
                     elem->has_sequence_type() ? "sequences" : "non-tensors"));
  if (auto dt = dtype_from_onnx(elem->tensor_type().elem_type())) c.dtype = *dt;
  if (c.present) {
    const auto length = given.sequence_lengths.find(name);
    if (length == given.sequence_lengths.end())
      fail_needs_value(fmt::format(
          "input '{}' is a sequence, whose length is given per run (ampx.InferenceSession "
          "takes it as a list of arrays)",
          name));
    if (length->second < 0)
      fail(fmt::format("input '{}' is a sequence of length {}", name, length->second));
    for (int64_t i = 0; i < length->second; ++i) {
      const std::string element = sequence_element_name(name, i);
      if (values_.contains(element))
        fail(fmt::format("input '{}' element {} is named '{}', as another input is", name, i,
                         element));
      names.push_back(element);
      c.elements.push_back(add_tensor_input(element, elem->tensor_type()));
      values_[element] = c.elements.back();  // taken: no second input of this name
    }
  }
  composites_[name] = std::move(c);
}

void Importer::bind_composite_output(const std::string& name, const CompositeValue& c,
                                     std::unordered_set<ValueId>& seen) {
  if (c.kind == CompositeValue::Kind::kOptionalTensor) {
    if (!c.elements.empty()) add_output(c.elements[0], name, seen);
    return;
  }
  if (!c.holds_sequence()) return;
  for (size_t i = 0; i < c.elements.size(); ++i)
    add_output(c.elements[i], sequence_element_name(name, static_cast<int64_t>(i)), seen);
}

}  // namespace ampx::onnx_io
