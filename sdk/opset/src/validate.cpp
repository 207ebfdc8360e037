// validate(): the structural rules, the dtype rule of docs/OPS.md, and the
// declared outputs against the inferred ones.
#include "ampx/opset/validate.hpp"

#include "ampx/opset/catalogue.hpp"
#include "ampx/plugin_support.hpp"

namespace ampx::opset {
namespace {

using plugin_support::dtype_name;
using plugin_support::dtype_size;
using plugin_support::is_float_dtype;
using plugin_support::NodeView;

[[noreturn]] void unsupported(const NodeView& v, const std::string& what) {
  throw UnsupportedNode(v.where() + ": " + what);
}

size_t tensor_count(const NodeView& v) {
  return v.num_inputs() + v.num_outputs();
}
std::string tensor_label(const NodeView& v, size_t i) {
  return i < v.num_inputs() ? "input " + std::to_string(i)
                            : "output " + std::to_string(i - v.num_inputs());
}
ampx_dtype tensor_dtype(const NodeView& v, size_t i) {
  return i < v.num_inputs() ? v.input(i).dtype : v.output(i - v.num_inputs()).dtype;
}

// Tensors of a compute op that have a dtype of their own (docs/OPS.md):
// Where's condition and the comparisons' results are bool, the logical ops
// are bool throughout, ArgMax's, ArgMin's and MaxPoolIndices' results are i64.
bool is_comparison(std::string_view op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
         op == "GreaterOrEqual";
}
ampx_dtype fixed_dtype(std::string_view op, size_t slot, size_t n_in) {
  if (op == "Where" && slot == 0) return AMPX_DTYPE_BOOL;
  if (is_comparison(op) && slot == n_in) return AMPX_DTYPE_BOOL;
  if (op == "Not" || op == "And" || op == "Or") return AMPX_DTYPE_BOOL;
  if ((op == "ArgMax" || op == "ArgMin" || op == "MaxPoolIndices") && slot == n_in)
    return AMPX_DTYPE_I64;
  if (op == "TopK" && slot == n_in + 1) return AMPX_DTYPE_I64;  // the indices
  // Class labels and the dropout seed are i64 (docs/OPS.md, "Training ops").
  if (op == "SoftmaxCrossEntropy" && slot == 1) return AMPX_DTYPE_I64;
  if (op == "SoftmaxCrossEntropyGrad" && slot == 2) return AMPX_DTYPE_I64;
  if (op == "DropoutTraining" && slot == 1) return AMPX_DTYPE_I64;
  return AMPX_DTYPE_INVALID;
}

// Index inputs of compute ops, i64 or i32 as Gather's: GatherGrad's indices,
// the recurrent ops' sequence lengths (the last input of 8 or 6),
// Attention's nonpad_kv_seqlen and RotaryEmbedding's position_ids.
bool is_index_slot(std::string_view op, size_t slot, size_t n_in) {
  return (op == "GatherGrad" && slot == 1) || (op == "LSTM" && slot == 7 && n_in == 8) ||
         ((op == "GRU" || op == "RNN") && slot == 5 && n_in == 6) ||
         (op == "Attention" && slot == 4 && n_in == 5) ||      // nonpad_kv_seqlen
         (op == "RotaryEmbedding" && slot == 3 && n_in == 4);  // position_ids
}

// Attention's mask (input 3) is bool or the common float dtype.
bool is_bool_mask_slot(std::string_view op, size_t slot, ampx_dtype dt) {
  return op == "Attention" && slot == 3 && dt == AMPX_DTYPE_BOOL;
}

// The optimizer updates work on the f32 master weights and their f32 state
// only: a 16-bit form would round every update away.
bool is_f32_only(std::string_view op) {
  return op == "SgdUpdate" || op == "AdamUpdate" || op == "UpdateGuard";
}

bool is_int_dtype(ampx_dtype dt) {
  return dt == AMPX_DTYPE_I64 || dt == AMPX_DTYPE_I32;
}

// ONNX's Neg is defined for the signed integers only (Abs for every one:
// |x| of an unsigned x is x). The bit ops work on the integers only.
bool is_bit_op(std::string_view op) {
  return op == "BitShift" || op == "BitwiseAnd" || op == "BitwiseOr" || op == "BitwiseXor" ||
         op == "BitwiseNot";
}

// Every tensor of a compute op is a float of one common dtype (integer
// ops: or i64 / i32), except the fixed ones above. Returns that dtype.
// f64: the elementwise and integer rules always; kCompute only in the
// reference kernels' float64 mode (ValidateOptions::f64_compute), and never
// for the f32-only ops.
ampx_dtype float_dtype(const NodeView& v, DtypeRule rule, const ValidateOptions& options) {
  const bool allow_int = rule == DtypeRule::kInteger;
  const bool allow_f64 = rule != DtypeRule::kCompute || options.f64_compute;
  ampx_dtype common = AMPX_DTYPE_INVALID;
  size_t first = 0;
  for (size_t i = 0; i < tensor_count(v); ++i) {
    const ampx_dtype dt = tensor_dtype(v, i);
    if (dtype_size(dt) == 0) v.fail(tensor_label(v, i) + " has an invalid dtype");
    if (const ampx_dtype fixed = fixed_dtype(v.op_type(), i, v.num_inputs());
        fixed != AMPX_DTYPE_INVALID) {
      if (dt != fixed)
        unsupported(
            v, tensor_label(v, i) + " is " + dtype_name(dt) + ", expected " + dtype_name(fixed));
      continue;
    }
    if (is_bool_mask_slot(v.op_type(), i, dt)) continue;
    if (is_index_slot(v.op_type(), i, v.num_inputs())) {
      if (!is_int_dtype(dt))
        unsupported(v, std::string("indices are ") + dtype_name(dt) + ", expected i64 or i32");
      continue;
    }
    if (!is_float_dtype(dt) && !(allow_int && plugin_support::is_integer_dtype(dt))) {
      unsupported(v, tensor_label(v, i) + " is " + dtype_name(dt) + ", expected f32, f16 or bf16" +
                         (allow_int ? " (or an integer type)" : ""));
    }
    if (common == AMPX_DTYPE_INVALID) {
      common = dt;
      first = i;
    } else if (dt != common) {
      v.fail(tensor_label(v, i) + " is " + dtype_name(dt) + " but " + tensor_label(v, first) +
             " is " + dtype_name(common) + ": all float tensors of a node share one dtype");
    }
  }
  if (is_bit_op(v.op_type()) && !plugin_support::is_integer_dtype(common))
    unsupported(v, std::string("dtype ") + dtype_name(common) + " is not an integer type");
  if (v.op_type() == "Neg" && plugin_support::is_unsigned_dtype(common))
    unsupported(
        v, std::string("dtype ") + dtype_name(common) + " is unsigned: Neg takes signed types");
  if (common == AMPX_DTYPE_F64 && !allow_f64)
    unsupported(v, "dtype f64 is not handled by this op (f32, f16, bf16 only)");
  if (is_f32_only(v.op_type()) && common != AMPX_DTYPE_F32)
    unsupported(v, std::string("dtype ") + dtype_name(common) +
                       " is not handled by this op (master weights and their state are f32)");
  return common;
}

// Data movement: the data tensors share one dtype, any dtype; the indices
// of Gather, GatherElements, GatherND and ScatterND (input 1) are i64 or i32.
ampx_dtype data_dtype(const NodeView& v) {
  const std::string_view op = v.op_type();
  const bool gather =
      op == "Gather" || op == "GatherElements" || op == "GatherND" || op == "ScatterND";
  ampx_dtype common = AMPX_DTYPE_INVALID;
  size_t first = 0;
  for (size_t i = 0; i < tensor_count(v); ++i) {
    const ampx_dtype dt = tensor_dtype(v, i);
    if (dtype_size(dt) == 0) v.fail(tensor_label(v, i) + " has an invalid dtype");
    if (gather && i == 1) {
      if (!is_int_dtype(dt))
        unsupported(v, std::string("indices are ") + dtype_name(dt) + ", expected i64 or i32");
      continue;
    }
    if (common == AMPX_DTYPE_INVALID) {
      common = dt;
      first = i;
    } else if (dt != common) {
      v.fail(tensor_label(v, i) + " is " + dtype_name(dt) + " but " + tensor_label(v, first) +
             " is " + dtype_name(common) + ": data tensors of a node share one dtype");
    }
  }
  return common;
}

ampx_dtype dtype_rule(const NodeView& v, const OpDef& op, const ValidateOptions& options) {
  switch (op.dtype_rule) {
    case DtypeRule::kCompute:
    case DtypeRule::kElementwise:
    case DtypeRule::kInteger:
      return float_dtype(v, op.dtype_rule, options);
    case DtypeRule::kData:
      return data_dtype(v);
    case DtypeRule::kCast:
      for (size_t i = 0; i < tensor_count(v); ++i)
        if (dtype_size(tensor_dtype(v, i)) == 0)
          v.fail(tensor_label(v, i) + " has an invalid dtype");
      return v.input(0).dtype;
  }
  return AMPX_DTYPE_INVALID;
}

void check_declared_outputs(const NodeView& v, const std::vector<TensorSpec>& want) {
  if (v.num_outputs() != want.size()) {
    v.fail("has " + std::to_string(v.num_outputs()) + " outputs, expected " +
           std::to_string(want.size()));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const ampx_tensor_desc& t = v.output(i);
    const std::string what = want.size() == 1 ? "output" : "output " + std::to_string(i);
    if (t.dtype != want[i].dtype) {
      v.fail(what + " is " + dtype_name(t.dtype) + ", expected " + dtype_name(want[i].dtype));
    }
    const Dims got(t.dims, t.dims + t.rank);
    if (got != want[i].dims)
      v.fail(what + " has shape " + dims_str(got) + ", expected " + dims_str(want[i].dims));
  }
}

}  // namespace

ampx_dtype validate(const ampx_node_desc& node, const ValidateOptions& options) {
  const NodeView v(node);
  const OpDef* op = find_op(v.op_type());
  if (!op) unsupported(v, "unknown op type");
  // Arity first, so that the dtype rule never indexes a missing input.
  const auto n = static_cast<int>(v.num_inputs());
  if (n >= op->min_inputs && (op->max_inputs < 0 || n <= op->max_inputs) && n > 0) {
    const ampx_dtype dt = dtype_rule(v, *op, options);
    check_declared_outputs(v, infer_outputs(node));
    return dt;
  }
  (void)infer_outputs(node);  // throws the arity message
  v.fail("has no inputs");
}

bool succeeds(const std::function<void()>& fn, std::string* why) noexcept {
  try {
    fn();
    return true;
  } catch (const std::exception& e) {
    if (why) {
      try {
        *why = e.what();
      } catch (...) {
      }
    }
  } catch (...) {
    if (why) why->clear();
  }
  return false;
}

bool is_valid(const ampx_node_desc& node, std::string* why,
              const ValidateOptions& options) noexcept {
  return succeeds([&] { (void)validate(node, options); }, why);
}

}  // namespace ampx::opset
