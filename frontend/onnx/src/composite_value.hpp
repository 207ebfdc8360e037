// ONNX's sequences and optionals at import (docs/ONNX.md, "Sequences and
// optionals"). ampx's IR holds only tensors, so a sequence is what the
// importer knows of it: the list of its elements' IR values, whose length
// is known at import (a graph input's length is given per run, as its
// shapes are); an optional is a value or none, known at import too. The
// sequence ops (onnx_sequences.cpp) are list operations on them, and only
// the tensors they hold reach the graph.
#pragma once

#include <ampx/ir/graph.hpp>

#include <variant>
#include <vector>

namespace ampx::onnx_io {

struct CompositeValue {
  enum class Kind {
    kSequence,          // `elements`, any number
    kOptionalTensor,    // `elements`: none, or the one tensor
    kOptionalSequence,  // `present`, and then the sequence's `elements`
  };
  Kind kind = Kind::kSequence;
  bool present = true;  // an optional's: whether it holds a value
  std::vector<ValueId> elements;
  // The element type where it is declared (SequenceEmpty's dtype, a
  // typed input): an empty sequence still has one. kInvalid: unknown.
  DType dtype = DType::kInvalid;

  bool is_optional() const { return kind != Kind::kSequence; }
  // A sequence, or an optional holding one.
  bool holds_sequence() const {
    return kind == Kind::kSequence || (kind == Kind::kOptionalSequence && present);
  }
};

// What an ONNX name holds at import: a tensor (an IR value) or a sequence
// or optional. If branches and Loop bodies pass either.
using HeldValue = std::variant<ValueId, CompositeValue>;

}  // namespace ampx::onnx_io
