#include "capability.hpp"

#include "ampx/opset/validate.hpp"
#include "ampx/opset/work.hpp"
#include "ampx/plugin_support.hpp"
#include "kernels.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

namespace ps = ampx::plugin_support;

Answer no(std::string note) {
  return {AMPX_SUPPORT_UNSUPPORTED, -1, std::move(note)};
}

std::string sm(int cc) {
  return "sm_" + std::to_string(cc);
}

// The float dtype the node computes in (the dtype rule makes it unique),
// INVALID when it has no float tensor.
ampx_dtype float_dtype(const ps::NodeView& v) {
  for (size_t i = 0; i < v.num_inputs() + v.num_outputs(); ++i) {
    const ampx_dtype dt =
        i < v.num_inputs() ? v.input(i).dtype : v.output(i - v.num_inputs()).dtype;
    if (ps::is_float_dtype(dt)) return dt;
  }
  return AMPX_DTYPE_INVALID;
}

// A hint only: peak-ish rates of a recent data-centre GPU plus launch cost.
double cost_hint(const ampx_node_desc& node, bool tensor_cores) {
  const opset::WorkEstimate w = opset::estimate_work(node);
  const double flops_per_s = tensor_cores ? 300e12 : 30e12;
  return 5.0 + (w.flops / flops_per_s + w.bytes / 2e12) * 1e6;
}

Answer decide(const ps::NodeView& v, const OpEntry& op, const DeviceInfo& dev,
              const CudnnLibrary& cudnn) {
  const ampx_node_desc& node = v.desc();
  for (size_t i = 0; i < v.num_inputs() + v.num_outputs(); ++i) {
    const ampx_tensor_desc& t = i < v.num_inputs() ? v.input(i) : v.output(i - v.num_inputs());
    if (t.rank > kern::kMaxRank)
      return no("rank " + std::to_string(t.rank) + " > " + std::to_string(kern::kMaxRank) +
                " is not supported by the CUDA kernels");
  }
  const ampx_dtype dt = float_dtype(v);
  const bool is16 = ps::is_16bit_float(dt);
  const int cc = dev.cc();

  if (op.cls == OpClass::kDataMovement) {  // bit copies: every dtype, every GPU
    return {AMPX_SUPPORT_NATIVE, cost_hint(node, false), "bit copy kernel"};
  }
  if (op.cls == OpClass::kProbe) {  // f32, f16 and bf16 inputs, read as bits
    for (size_t i = 0; i < v.num_inputs(); ++i) {
      const ampx_dtype d = v.input(i).dtype;
      if (d != AMPX_DTYPE_F32 && d != AMPX_DTYPE_F16 && d != AMPX_DTYPE_BF16)
        return no(std::string("TensorStats of ") + ps::dtype_name(d) + " has no CUDA kernel");
    }
    return {AMPX_SUPPORT_NATIVE, cost_hint(node, false), "own kernel, each input in its dtype"};
  }
  if (op.cls == OpClass::kCast) {
    const ampx_dtype from = v.input(0).dtype, to = v.output(0).dtype;
    if (from == to) return {AMPX_SUPPORT_NATIVE, cost_hint(node, false), "copy"};
    if (!kern::cast_supported(from, to))
      return no(std::string("Cast ") + ps::dtype_name(from) + " -> " + ps::dtype_name(to) +
                " has no CUDA kernel");
    if ((from == AMPX_DTYPE_BF16 || to == AMPX_DTYPE_BF16) && cc < 80)
      return no("bf16 needs sm_80+ (this GPU is " + sm(cc) + ")");
    return {AMPX_SUPPORT_NATIVE, cost_hint(node, false), "own kernel, vectorised"};
  }
  if (op.cls == OpClass::kIntegerCompute && ps::is_integer_dtype(v.input(0).dtype)) {
    // The op set gives these nodes one dtype; every integer width has a
    // kernel instantiation of its own (exact, wrapping).
    return {AMPX_SUPPORT_NATIVE, cost_hint(node, false), "own kernel, integer"};
  }
  if (dt != AMPX_DTYPE_F32 && !is16)
    return no(std::string(ps::dtype_name(dt == AMPX_DTYPE_INVALID ? v.input(0).dtype : dt)) +
              " has no CUDA kernel (f32, f16, bf16 only)");
  if (dt == AMPX_DTYPE_BF16 && cc < 80) return no("bf16 needs sm_80+ (this GPU is " + sm(cc) + ")");

  switch (op.cls) {
    case OpClass::kContraction: {
      // Tensor cores: f16 from Volta (sm_70), bf16 from Ampere (sm_80).
      if (dt == AMPX_DTYPE_F16 && cc < 70)
        return no("no f16 tensor cores before sm_70 (this GPU is " + sm(cc) + ")");
      // K == 0 (an empty sum) is not worth a special path in cuBLASLt.
      const ampx_tensor_desc& a = v.input(0);
      const bool trans_a = v.op_type() == "Gemm" && v.get_int("transA", 0) != 0;
      const int64_t k = a.rank >= 2 ? a.dims[trans_a ? a.rank - 2 : a.rank - 1] : 0;
      if (k == 0) return no("K = 0 (empty reduction) is not supported");
      return {AMPX_SUPPORT_NATIVE, cost_hint(node, is16),
              is16 ? "cuBLASLt, tensor cores, f32 accumulate" : "cuBLASLt f32 (no TF32)"};
    }
    case OpClass::kConvolution: {
      std::string why;
      if (cudnn_conv_usable(v, cudnn, &why)) {
        return {AMPX_SUPPORT_NATIVE, cost_hint(node, is16),
                cudnn.description() + (is16 ? ", tensor-op math, f32 accumulate" : ", f32 FMA")};
      }
      // The direct kernel runs everything, but 16-bit is no faster there.
      return {is16 ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE, cost_hint(node, false),
              std::string(is16 ? "direct conv kernel, no tensor cores (" : "direct conv kernel (") +
                  why + ")"};
    }
    case OpClass::kIntegerCompute:  // CumProd of a float: the product in double, as cpu_ref
      return {AMPX_SUPPORT_NATIVE, cost_hint(node, false),
              is16 ? "own kernel, 16-bit I/O, f64 products" : "own kernel, f64 products"};
    default:
      if (v.op_type() == "Det")  // whatever the storage, as cpu_ref
        return {AMPX_SUPPORT_NATIVE, cost_hint(node, false), "own kernel, LU in f64"};
      // Memory-bound kernels: 16-bit loads/stores halve the traffic, which is
      // what makes them fast; the math is f32 in registers.
      return {AMPX_SUPPORT_NATIVE, cost_hint(node, false),
              is16 ? "own kernel, 16-bit I/O, f32 math" : "own kernel"};
  }
}

}  // namespace

Answer answer(const ampx_node_desc& node, const DeviceInfo& dev,
              const CudnnLibrary& cudnn) noexcept {
  try {
    std::string why;
    if (!opset::is_valid(node, &why)) {
      // The note is about this node already: drop the "node 'x' (Op): " prefix.
      const size_t cut = why.find("): ");
      if (why.rfind("node '", 0) == 0 && cut != std::string::npos) why.erase(0, cut + 3);
      return no(why);
    }
    const ps::NodeView v(node);
    const OpEntry* op = find_op(v.op_type());
    if (!op) return no("no CUDA kernel for " + std::string(v.op_type()));
    // Fused epilogues (docs/OPS.md) are not implemented here yet: answered
    // unsupported, so the host never fuses for this device.
    const std::string_view name = v.op_type();
    if ((name == "Gemm" || name == "MatMul" || name == "Conv2d" || name == "BatchNorm") &&
        v.get_string("activation", "none") != "none")
      return no("no fused activation epilogue in the CUDA kernels");
    if (name == "MatMul" && v.num_inputs() > 2)
      return no("no fused MatMul bias in the CUDA kernels");
    if (name == "Conv2d" && v.num_inputs() > 3)
      return no("no fused Conv2d residual in the CUDA kernels");
    if ((name == "MaxPool" || name == "AveragePool") && v.has_attr("dilations") &&
        v.get_ints("dilations") != std::vector<int64_t>{1, 1})
      return no("no dilated pooling in the CUDA kernels");
    if (name == "Conv2dGradWeight" && v.num_outputs() > 1)
      return no("no fused bias gradient (bias_gradient) in the CUDA kernels");
    // Det: one thread per matrix, its f64 copy in scratch (kernels/det.cu).
    if (name == "Det" && v.input(0).rank >= 2 &&
        v.input(0).dims[v.input(0).rank - 1] > kern::kDetMaxM)
      return no("Det of matrices larger than " + std::to_string(kern::kDetMaxM) + " x " +
                std::to_string(kern::kDetMaxM) + " has no CUDA kernel (one thread per matrix)");
    if (!dev.kernel_image_error.empty()) return no(dev.kernel_image_error);
    return decide(v, *op, dev, cudnn);
  } catch (const std::exception& e) {
    return no(e.what());
  } catch (...) {
    return no("unknown error while answering");
  }
}

}  // namespace ampx::cuda
