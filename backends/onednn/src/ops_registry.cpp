#include <string_view>

#include "ampx/opset/catalogue.hpp"

#include "ops.hpp"
#include "rnn_kernel.hpp"
#include "train_kernels.hpp"

namespace ampx::onednn {
namespace {

bool is_float16_32(ampx_dtype dt) {
  return dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_BF16;
}

}  // namespace

bool has_training_primitive(std::string_view op) {
  return op == "ReluGrad" || op == "SigmoidGrad" || op == "TanhGrad" || op == "GeluGrad" ||
         op == "ClipGrad" || op == "SoftmaxGrad" || op == "Conv2dGradWeight" ||
         op == "AveragePoolGrad" || op == "MaxPoolGrad" || op == "BatchNormTraining" ||
         op == "BatchNormGrad" || op == "LayerNormGrad";
}

bool runs_as_loop(const NodeView& v) {
  const std::string_view op = v.op_type();
  if (op == "Reshape" || op == "Flatten" || op == "Dropout" || op == "Slice" || op == "Gather")
    return true;
  if (op == "Cast") return !is_float16_32(v.input(0).dtype) || !is_float16_32(v.output(0).dtype);
  if (op == "Erf" || op == "ArgMax" || op == "Split" || op == "Expand" || op == "Pad" ||
      op == "Where" || op == "Equal")
    return true;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Neg") {
    if (!is_float16_32(v.output(0).dtype)) return true;
    if (op != "Neg" && !binary_has_primitive(v)) return true;
  }
  if (op == "Pow" || op == "Resize" || op == "ConvTranspose") return !onnx_op_has_primitive(v);
  // reduction_max starts from the lowest finite value (a row of -inf gave
  // -FLT_MAX) and drops a NaN in vmaxps' first operand: the loop, as
  // ReduceMin (ops_onnx_later.cpp).
  if (op == "ReduceMax") return true;
  // A reduction that reduces nothing (every reduced axis of size 1, or a
  // rank-0 input: Silero VAD's ReduceMean of a squeezed scalar): oneDNN
  // refuses a reduction whose source and destination dims are equal.
  if (op.starts_with("Reduce") &&
      plugin_support::element_count(v.input(0)) == plugin_support::element_count(v.output(0)))
    return true;
  // The later ONNX ops: a primitive where oneDNN 2.6 computes what the
  // reference does (ops_onnx_later.cpp), else the loop. LSTM, GRU and RNN
  // choose at prepare and run (rnn_kernel.hpp); Attention at its answer
  // (attention_kernel.hpp).
  if (op == "Attention") return false;
  if (opset::is_reference_only(op) && !is_recurrent_op(op)) return !later_op_has_primitive(v);
  // The training ops oneDNN 2.6 has no primitive for: the loss, SliceGrad
  // and GatherGrad (scatters), the dropout draw (docs/OPS.md fixes its bits)
  // and the optimizer updates (in place on the f32 master weights). The
  // others are backward primitives (ops_backward.cpp, train_kernels.hpp).
  if (opset::is_training_op(op)) return !has_training_primitive(op);
  return false;
}

PrimitivePlan plan_primitive(const NodeView& v, const dnnl::engine& eng) {
  const std::string_view op = v.op_type();
  if (op == "Conv2d") return plan_conv2d(v, eng);
  if (op == "MatMul") return plan_matmul(v, eng);
  if (op == "Gemm") return plan_gemm(v, eng);
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Gelu" || op == "Clip")
    return plan_eltwise(v, eng);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return plan_binary(v, eng);
  if (op == "Softmax") return plan_softmax(v, eng);
  if (op == "BatchNorm") return plan_batchnorm(v, eng);
  if (op == "LayerNorm") return plan_layernorm(v, eng);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return plan_pool(v, eng);
  if (op == "ReduceMean" || op == "ReduceSum") return plan_reduce(v, eng);
  if (op == "Transpose") return plan_transpose(v, eng);
  if (op == "Cast") return plan_cast(v, eng);
  if (op == "LeakyRelu" || op == "HardSigmoid" || op == "HardSwish" || op == "Exp" || op == "Log" ||
      op == "Sqrt" || op == "Neg" || op == "Reciprocal" || op == "Pow")
    return plan_onnx_eltwise(v, eng);
  if (op == "PRelu") return plan_prelu(v, eng);
  if (op == "LogSoftmax") return plan_log_softmax(v, eng);
  if (op == "ReduceMax") return plan_reduce_max(v, eng);
  if (op == "ConvTranspose") return plan_conv_transpose(v, eng);
  if (opset::is_reference_only(op) && !is_recurrent_op(op)) return plan_later_op(v, eng);
  if (op == "Resize") return plan_resize(v, eng);
  if (op == "ReluGrad" || op == "SigmoidGrad" || op == "TanhGrad" || op == "GeluGrad" ||
      op == "ClipGrad")
    return plan_eltwise_grad(v, eng);
  if (op == "SoftmaxGrad") return plan_softmax_grad(v, eng);
  if (op == "Conv2dGradWeight") return plan_conv_grad_weight(v, eng);
  if (op == "AveragePoolGrad") return plan_avgpool_grad(v, eng);
  if (is_multi_primitive_training_op(v)) return plan_multi_primitive_training_op(v, eng);
  throw NoPrimitive("no oneDNN kernel for op " + std::string(op));
}

}  // namespace ampx::onednn
