// The model-level facts ampx writes into an exported model's
// metadata_props and reads back on import: what no standard ONNX attribute
// can carry (ONNX's checker refuses unknown attributes on standard ops).
#pragma once

#include <string_view>

namespace ampx::onnx_io {

// The names of the exported ONNX nodes that hold integer arithmetic written
// in f32 (ir::Node::keep_f32: an imported QLinearMatMul's MatMul, ...), one
// per line. Without it a model exported at O0 and planned again at O2 would
// put those MatMuls in 16 bits and change the integers.
inline constexpr std::string_view kKeepF32NodesKey = "ampx.keep_f32";

}  // namespace ampx::onnx_io
