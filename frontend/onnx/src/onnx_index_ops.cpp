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
  const ConstantData known = im.value_for_output_shape(n, 0, "the input");
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

namespace ampx::onnx_io {

// OneHot (9+): Where(Equal(indices, iota), on, off), the iota [0, depth)
// along the new axis. `depth` must be known at import (a constant, or a
// small input whose value is given: each depth is its own plan), since it
// is the output's shape. Non-integer indices and depth are cast to int64
// (ONNX's text; a cast truncates); from opset 11 an index in [-depth, -1]
// counts from the end; any other index out of range gives a row of
// off_value.
void one_hot(Importer& im, const onnx::NodeProto& n) {
  const ValueId indices = im.input(n, 0), values = im.input(n, 2);
  const TensorType it = im.type(indices), vt = im.type(values);
  if (it.dtype == DType::kBool) im.fail("indices must be numeric, got bool");
  if (element_count(vt.shape) != 2 || vt.shape.size() != 1)
    im.fail(fmt::format("values ('{}') must be [off_value, on_value], shape [2], got {}",
                        n.input(2), shape_str(vt.shape)));
  const double d = im.const_scalar(n, 1, "depth");
  // A cast to int64 truncates; anything not at least 1 leaves no class.
  if (!(d >= 1.0 && d < 9.0e18))
    im.fail(fmt::format("depth ('{}') must be at least 1, got {}", n.input(1), d));
  const auto depth = static_cast<int64_t>(d);
  const auto rank = static_cast<int64_t>(it.shape.size());
  int64_t axis = im.attr_int_or(n, "axis", -1);
  if (axis < -rank - 1 || axis > rank)
    im.fail(fmt::format("axis {} is out of range for indices of rank {} (output rank {})", axis,
                        rank, rank + 1));
  if (axis < 0) axis += rank + 1;
  Shape out = it.shape, index_shape = it.shape, iota_shape(static_cast<size_t>(rank + 1), 1);
  out.insert(out.begin() + axis, depth);
  index_shape.insert(index_shape.begin() + axis, 1);
  iota_shape[static_cast<size_t>(axis)] = depth;
  im.check_size({vt.dtype, out}, "the output");
  im.check_size({DType::kI64, iota_shape}, "the iota of depth");

  ValueId idx = it.dtype == DType::kI64
                    ? indices
                    : im.emit1("Cast", {indices}, {{"to", int64_t(to_c(DType::kI64))}});
  if (im.opset() >= 11) {
    const std::vector<int64_t> zero{0}, dep{depth};
    const ValueId negative = im.emit1("Less", {idx, im.constant_i64(zero, {})});
    idx = im.emit1("Where", {negative, im.emit1("Add", {idx, im.constant_i64(dep, {})}), idx});
  }
  idx = im.emit1("Reshape", {idx},
                 {{"shape", std::vector<int64_t>(index_shape.begin(), index_shape.end())}});
  std::vector<int64_t> iota(static_cast<size_t>(depth));
  for (int64_t k = 0; k < depth; ++k) iota[static_cast<size_t>(k)] = k;
  const ValueId hot = im.emit1("Equal", {idx, im.constant_i64(iota, iota_shape)});
  const std::vector<int64_t> first{0}, second{1};
  const ValueId off = im.emit1("Gather", {values, im.constant_i64(first, {})}, {{"axis", 0}});
  const ValueId on = im.emit1("Gather", {values, im.constant_i64(second, {})}, {{"axis", 0}});
  im.bind(n, 0, im.emit1("Where", {hot, on, off}));
}

// Compress (9+): a Gather of the positions the condition selects, along
// `axis` (or of the flattened input without one). The output's shape is
// the number of true values, so the condition must be known at import (a
// constant, or a small input whose value is given).
void compress(Importer& im, const onnx::NodeProto& n) {
  ValueId x = im.input(n, 0);
  const ValueId cond = im.input(n, 1);
  const TensorType ct = im.type(cond);
  if (ct.dtype != DType::kBool)
    im.fail(fmt::format("condition must be bool, got {}", dtype_name(ct.dtype)));
  if (ct.shape.size() != 1)
    im.fail(fmt::format("condition must have rank 1, got shape {}", shape_str(ct.shape)));
  const ConstantData known = im.value_for_output_shape(n, 1, "the condition");
  const Shape xs = im.type(x).shape;
  int64_t axis = 0;
  if (const auto a = im.attr_int(n, "axis")) {
    axis = norm_axis(im, *a, static_cast<int64_t>(xs.size()));
  } else {
    x = im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>{element_count(xs)}}});
  }
  const int64_t size = im.attr_int(n, "axis") ? xs[static_cast<size_t>(axis)] : element_count(xs);
  std::vector<int64_t> picked;
  for (int64_t k = 0; k < ct.shape[0]; ++k) {
    if ((*known)[static_cast<size_t>(k)] == std::byte{0}) continue;
    if (k >= size)
      im.fail(fmt::format("condition selects position {}, past the axis' {} elements", k, size));
    picked.push_back(k);
  }
  const auto count = static_cast<int64_t>(picked.size());
  im.bind(n, 0, im.emit1("Gather", {x, im.constant_i64(picked, {count})}, {{"axis", axis}}));
}

}  // namespace ampx::onnx_io
