// ONNX's indexing, sorting and running-sum ops (docs/ONNX.md): Mod,
// CumSum, CumProd, TopK, GatherElements, GatherND and ScatterND map onto the op
// set's ops of the same name, their axis and k inputs read as constants
// (after folding); NonZero is evaluated at import, where its input is a
// constant, because its output's shape depends on the values.
#include <fmt/format.h>
#include <ampx/exec/host_tensor.hpp>

#include <cstring>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {

// Mod 10 and 13 define fmod=0 (Python's %, the divisor's sign) for integers
// only, as ONNX Runtime refuses it for floats; Mod 28 defines it for floats
// too (A - floor(A / B) * B, with its signed-zero and infinity cases), which
// the op set's Mod computes.
void mod(Importer& im, const onnx::NodeProto& n) {
  const ValueId a = im.input(n, 0), b = im.input(n, 1);
  const int64_t fmod = im.attr_int_or(n, "fmod", 0);
  if (fmod == 0 && is_float(im.type(a).dtype) && im.opset() < 28)
    im.fail(fmt::format("fmod=0 on {} inputs is defined from opset 28 (the model's is {})",
                        dtype_name(im.type(a).dtype), im.opset()));
  im.bind(n, 0, im.emit1("Mod", {a, b}, {{"fmod", fmod}}));
}

void cum_sum(Importer& im, const onnx::NodeProto& n) {
  // ONNX's axis is an int32 or int64 tensor: read as integers (never
  // through a double, which loses 2^63 - 1 and cannot hold NaN as an axis).
  const auto axis = im.const_ints(n, 1, "axis");
  if (axis.size() != 1)
    im.fail(fmt::format("axis ('{}') must hold one value, it has {}", n.input(1), axis.size()));
  im.bind(n, 0,
          im.emit1(n.op_type() == "CumProd" ? "CumProd" : "CumSum", {im.input(n, 0)},
                   {{"axis", axis[0]},
                    {"exclusive", im.attr_int_or(n, "exclusive", 0)},
                    {"reverse", im.attr_int_or(n, "reverse", 0)}}));
}

// TopK 1 (opsets 1 to 9) has k as an attribute; from 10 an input [1]; 11
// added `largest` and `sorted`.
void top_k(Importer& im, const onnx::NodeProto& n) {
  int64_t k = 0;
  if (im.opset() < 10) {
    const auto a = im.attr_int(n, "k");
    if (!a) im.fail("attribute 'k' is required (TopK before opset 10)");
    k = *a;
  } else {
    const auto ks = im.const_ints(n, 1, "K");
    if (ks.size() != 1) im.fail(fmt::format("K must hold one value, it has {}", ks.size()));
    k = ks[0];
  }
  const auto outs = im.emit("TopK", {im.input(n, 0)},
                            {{"k", k},
                             {"axis", im.attr_int_or(n, "axis", -1)},
                             {"largest", im.attr_int_or(n, "largest", 1)},
                             {"sorted", im.attr_int_or(n, "sorted", 1)}});
  im.bind(n, 0, outs.at(0));
  if (n.output_size() > 1) im.bind(n, 1, outs.at(1));
}

void gather_elements(Importer& im, const onnx::NodeProto& n) {
  im.bind(n, 0,
          im.emit1("GatherElements", {im.input(n, 0), im.input(n, 1)},
                   {{"axis", im.attr_int_or(n, "axis", 0)}}));
}

void gather_nd(Importer& im, const onnx::NodeProto& n) {
  im.bind(n, 0,
          im.emit1("GatherND", {im.input(n, 0), im.input(n, 1)},
                   {{"batch_dims", im.attr_int_or(n, "batch_dims", 0)}}));
}

// `reduction` from opset 16 (none, add, mul); 18 added max and min.
void scatter_nd(Importer& im, const onnx::NodeProto& n) {
  const std::string r = im.attr_string_or(n, "reduction", "none");
  if ((r == "max" || r == "min") && im.opset() < 18)
    im.fail(fmt::format("reduction '{}' is defined from opset 18", r));
  im.bind(
      n, 0,
      im.emit1("ScatterND", {im.input(n, 0), im.input(n, 1), im.input(n, 2)}, {{"reduction", r}}));
}

// The coordinates of the non-zero elements, [rank, count], row-major order.
void non_zero(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const Value& v = im.value(x);
  const ConstantData known = im.known_value(x);
  if (!known)
    im.fail_needs_value(fmt::format(
        "the input ('{}') is computed at run time: NonZero's output shape depends on its values, "
        "and ampx plans fixed shapes (NonZero of a constant, or of a value that folds, is "
        "supported)",
        n.input(0)));
  const Shape shape = v.type.shape;
  const HostTensor t{"", v.type, *known};
  std::vector<bool> nz;
  if (is_integer(v.type.dtype) || v.type.dtype == DType::kBool) {
    const size_t es = dtype_size(v.type.dtype);
    const auto count = static_cast<size_t>(element_count(shape));
    for (size_t i = 0; i < count; ++i) {
      bool any = false;
      for (size_t b = 0; b < es; ++b) any = any || known->data()[i * es + b] != std::byte{0};
      nz.push_back(any);
    }
  } else {
    for (double d : to_doubles(t)) nz.push_back(d != 0.0);  // -0.0 is zero
  }
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t found = 0;
  for (bool b : nz) found += b ? 1 : 0;
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(rank, 1) * found));
  int64_t j = 0;
  for (size_t i = 0; i < nz.size(); ++i) {
    if (!nz[i]) continue;
    auto rem = static_cast<int64_t>(i);
    for (int64_t d = rank; d-- > 0;) {
      out[static_cast<size_t>(d * found + j)] = rem % shape[static_cast<size_t>(d)];
      rem /= shape[static_cast<size_t>(d)];
    }
    if (rank == 0) out[static_cast<size_t>(j)] = 0;  // a scalar: ONNX Runtime gives [1, n]
    ++j;
  }
  im.bind(n, 0, im.constant_i64(out, {std::max<int64_t>(rank, 1), found}));
}

}  // namespace ampx::onnx_io
