// The op set of docs/OPS.md as data: every op's stable id and name (as on
// the C ABI), its arity, its attributes and their kinds, which dtypes its
// kernels handle, and its AMP category. The ops are listed once, in
// ops.inc; the frontend's IR (whose OpType is OpId), every backend and the
// conformance kit read this one table; nothing else lists the ops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ampx/backend_api.h"

namespace ampx::opset {

// An op's stable id (ops.inc: ids never change and are never reused; the
// frontend hashes them into stored tuned-plan keys). Dense: 0 to
// kOpCount - 1, so tables may be indexed by it.
// clang-format off
enum class OpId : uint16_t {
#define AMPX_OP(name, id, ...) k##name = id,
#include "ampx/opset/ops.inc"
#undef AMPX_OP
};
inline constexpr size_t kOpCount = 0
#define AMPX_OP(...) +1
#include "ampx/opset/ops.inc"
#undef AMPX_OP
    ;
// clang-format on

// How the `auto` amp level treats an op (docs/PLANNER.md), registered on
// the op as TVM registers its mixed-precision conversion type.
enum class AmpCategory : uint8_t {
  kNone,     // not decided: `auto` lets it follow, and the planner warns
  kWhite,    // always 16-bit
  kBlack,    // always f32
  kPromote,  // widest float input dtype
  kFollow,   // dtype of its first float input
};

// The dtype rule of an op (docs/OPS.md, "Dtypes").
enum class DtypeRule {
  kCompute,      // every tensor is f32, f16 or bf16, one common dtype; also f64
                 // in the reference kernels' float64 mode only
                 // (ValidateOptions::f64_compute, validate.hpp), never on
                 // the other backends
  kElementwise,  // kCompute, or f64
  kInteger,      // kElementwise, or i64 / i32 (the importer's shape arithmetic)
  kData,         // any dtype, bit-exact copies (data movement)
  kCast,         // every tensor its own dtype by design (Cast, TensorStats)
};

struct AttrDef {
  std::string_view name;
  ampx_attr_kind kind;
  bool required;
};

struct OpDef {
  OpId id;
  std::string_view name;  // NUL-terminated literal, as in docs/OPS.md
  int min_inputs;
  int max_inputs;  // -1: variadic
  std::span<const AttrDef> attrs;
  DtypeRule dtype_rule;
  AmpCategory amp;
};

// NULL when the op set has no op of that name.
const OpDef* find_op(std::string_view name) noexcept;
// The op of that id (every OpId names one).
const OpDef& op_def(OpId id) noexcept;
// In the order of docs/OPS.md.
std::span<const OpDef> all_ops() noexcept;
// The ops whose AMP category is kNone, in the order of docs/OPS.md (a test
// keeps this list as it should be; the planner names them in a warning).
std::vector<std::string_view> ops_without_amp_category();

// The data-movement ops: they move bytes and compute nothing, so they are
// exact in every dtype and a 16-bit form is never slower than f32 (it moves
// half the bytes). A backend that stores a dtype answers them `native` in it,
// and the planner never brackets one with a Cast pair.
inline bool is_data_movement(std::string_view op_type) noexcept {
  const OpDef* op = find_op(op_type);
  return op && op->dtype_rule == DtypeRule::kData;
}

// The training ops (docs/OPS.md, "Training ops"): backward kernels, the
// loss and the optimizer updates.
bool is_training_op(std::string_view op_type) noexcept;

// The later ONNX ops (docs/OPS.md: rounding, Abs, Softplus, Mish,
// comparisons, logic, the variadic ops, the later reductions, ArgMin, Mod,
// CumSum, TopK, the Gather*/ScatterND indexing ops, Attention and
// RotaryEmbedding, the recurrent ops), kept
// together at the end of the inference ops. cpu_ref runs every one; onednn
// runs them too (a primitive where oneDNN computes what the reference does,
// its loop otherwise: backends/onednn/README.md), vulkan all but the
// recurrent ops (backends/vulkan/README.md), and cuda none yet: it answers
// them `unsupported`, and placement runs them elsewhere.
bool is_reference_only(std::string_view op_type) noexcept;

}  // namespace ampx::opset
