#include "ampx/opset/work.hpp"

#include <algorithm>
#include <string_view>

#include "ampx/opset/catalogue.hpp"
#include "ampx/plugin_support.hpp"

namespace ampx::opset {
namespace {

using plugin_support::dtype_size;
using plugin_support::is_16bit_float;

double product(const ampx_tensor_desc& t, int32_t from) {
  double p = 1;
  for (int32_t i = from; i < t.rank; ++i) p *= static_cast<double>(t.dims[i]);
  return p;
}

}  // namespace

WorkEstimate estimate_work(const ampx_node_desc& node) noexcept {
  WorkEstimate w;
  try {
    const plugin_support::NodeView v(node);
    const std::string_view op = v.op_type();
    double in_elems = 0, out_elems = 0, e16 = 0;
    auto count = [&](const ampx_tensor_desc& t, double& elems) {
      const auto n = static_cast<double>(plugin_support::element_count(t));
      elems += n;
      w.bytes += n * static_cast<double>(dtype_size(t.dtype));
      if (is_16bit_float(t.dtype)) e16 += n;
    };
    for (size_t i = 0; i < v.num_inputs(); ++i) count(v.input(i), in_elems);
    for (size_t i = 0; i < v.num_outputs(); ++i) count(v.output(i), out_elems);
    const OpDef* def = find_op(op);
    const bool data =
        def && (def->dtype_rule == DtypeRule::kData || def->dtype_rule == DtypeRule::kCast);
    w.elements_16bit = data ? 0 : e16;
    const size_t n_in = v.num_inputs();
    if (op == "Conv2d" && n_in >= 2 && v.input(1).rank == 4) {
      w.flops = 2 * out_elems * product(v.input(1), 1);
    } else if (op == "MatMul" && n_in >= 2 && v.input(0).rank >= 2) {
      const ampx_tensor_desc& a = v.input(0);
      w.flops = 2 * out_elems * static_cast<double>(a.dims[a.rank - 1]);
    } else if (op == "Gemm" && n_in >= 2 && v.input(0).rank == 2) {
      const ampx_tensor_desc& a = v.input(0);
      const int64_t k = v.get_int("transA", 0) ? a.dims[0] : a.dims[1];
      w.flops = 2 * out_elems * static_cast<double>(k) + out_elems;
    } else if ((op == "LSTM" || op == "GRU" || op == "RNN") && n_in >= 3 && v.input(0).rank == 3 &&
               v.input(1).rank == 3) {
      // X·W and H·R for every step, direction and gate: T·N·D·G·(I + H).
      const ampx_tensor_desc &x = v.input(0), &r = v.input(2);
      w.flops = 2 * static_cast<double>(x.dims[0]) * static_cast<double>(x.dims[1]) *
                product(v.input(1), 0) / std::max<double>(1, static_cast<double>(x.dims[2])) *
                static_cast<double>(x.dims[2] + r.dims[2]);
    } else if (op == "Attention" && n_in >= 3 && v.input(0).rank == 4 && v.input(1).rank == 4 &&
               v.input(2).rank == 4) {
      // Q·Kᵀ and P·V for every query row and key, the softmax (about 10
      // per score): B·Hq·S·T·(2E + 2Ev + 10).
      const ampx_tensor_desc &q = v.input(0), &k = v.input(1), &val = v.input(2);
      w.flops = product(q, 0) / std::max(1.0, static_cast<double>(q.dims[3])) *
                static_cast<double>(k.dims[2]) *
                static_cast<double>(2 * q.dims[3] + 2 * val.dims[3] + 10);
    } else if (op == "LinearAttention" && n_in >= 4 && v.input(0).rank == 3) {
      // Per step and state element: decay, retrieval, update (about 6) and
      // the reads of the query heads sharing it (2 each).
      const double group = static_cast<double>(std::max<int64_t>(1, v.get_int("q_num_heads", 1))) /
                           static_cast<double>(std::max<int64_t>(1, v.get_int("kv_num_heads", 1)));
      w.flops = static_cast<double>(v.input(0).dims[1]) * product(v.input(3), 0) * (6 + 2 * group);
    } else if (op == "Conv2dGradWeight" && n_in >= 2 && v.input(0).rank == 4) {
      // dW's multiply-adds, and one add per dY element for the optional dB.
      w.flops = 2 * product(v.output(0), 0) * product(v.input(0), 0) /
                std::max(1.0, static_cast<double>(v.input(0).dims[1]));
      if (v.num_outputs() > 1) w.flops += product(v.input(0), 0);
    } else if (op == "MaxPool" || op == "AveragePool" || op == "MaxPoolGrad" ||
               op == "AveragePoolGrad" || op == "MaxPoolIndices") {
      double k = 1;
      for (int64_t d : v.get_ints("kernel_shape", {1, 1})) k *= static_cast<double>(d);
      w.flops = out_elems * k;
    } else if (op == "Softmax" || op == "LayerNorm" || op == "RMSNorm" || op == "Gelu" ||
               op == "Sigmoid" || op == "Tanh" || op == "SoftmaxGrad" || op == "LayerNormGrad" ||
               op == "BatchNormTraining" || op == "BatchNormGrad" || op == "GeluGrad" ||
               op == "SigmoidGrad" || op == "TanhGrad" || op == "SoftmaxCrossEntropy" ||
               op == "SoftmaxCrossEntropyGrad" || op == "AdamUpdate" || op == "SgdUpdate" ||
               op == "Softplus" || op == "Mish") {
      w.flops = 10 * out_elems;
    } else if (op == "MultiSgdUpdate" || op == "MultiAdamUpdate") {
      w.flops = 10 * in_elems;         // the guard's test and square, the update, a copy
    } else if (op == "UpdateGuard") {  // a finite test and a square per gradient element
      w.flops = 3 * (in_elems - product(v.input(0), 0));
    } else if (op == "TensorStats") {  // a finite test, an abs, a max and two compares
      w.flops = 5 * in_elems;
    } else if (data) {
      w.flops = 0;
    } else {
      w.flops = std::max(in_elems, out_elems);
    }
  } catch (...) {
    w = WorkEstimate{};
  }
  return w;
}

}  // namespace ampx::opset
