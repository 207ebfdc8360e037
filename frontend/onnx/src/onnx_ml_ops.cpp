// ai.onnx.ml ops imported as op-set ops (docs/ONNX.md, "Other domains"),
// exactly as ONNX's reference (onnx/reference/ops/aionnxml) computes them:
//   Binarizer              Cast(X > threshold) to X's type (NaN gives 0)
//   ArrayFeatureExtractor  Gather on the last axis of the flattened
//                          indices; a 1-D X gives [1, count], as ONNX
//                          Runtime does
//   LabelEncoder           numeric keys and values (ml 2+): Equal against
//                          the keys, ArgMax, Gather, Where for the default
// Strings (LabelEncoder's usual keys, a string X) are not ampx types: such
// a model is refused at its attribute, input or initializer.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

}  // namespace

// T: float, double, int64, int32. For an integer X, x > t is x > floor(t)
// (exact for every t), the threshold clamped to the type's range.
void binarizer(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const DType dt = im.type(x).dtype;
  if (!is_float(dt) && dt != DType::kI64 && dt != DType::kI32)
    im.fail(fmt::format("X is {}; Binarizer takes float, double, int64 or int32", dtype_name(dt)));
  double t = im.attr_float_or(n, "threshold", 0.0F);
  if (!is_float(dt)) {
    if (std::isnan(t)) im.fail("threshold is NaN");
    const double lo = dt == DType::kI32 ? -2147483648.0 : -9.2233720368547758e18;
    const double hi = dt == DType::kI32 ? 2147483647.0 : 9.2233720368547748e18;
    t = std::clamp(std::floor(t), lo, hi);
  }
  const ValueId above = im.emit1("Greater", {x, cast_scalar(im, dt, t)});
  im.bind(n, 0, im.emit1("Cast", {above}, {{"to", int64_t(to_c(dt))}}));
}

void array_feature_extractor(Importer& im, const N& n) {
  ValueId x = im.input(n, 0), y = im.input(n, 1);
  const Shape xs = im.type(x).shape, ys = im.type(y).shape;
  if (xs.empty()) im.fail("X must have rank >= 1, got a scalar");
  if (im.type(y).dtype != DType::kI64)
    im.fail(fmt::format("Y (the indices) must be int64, got {}", dtype_name(im.type(y).dtype)));
  const int64_t count = element_count(ys);
  if (ys.size() != 1) y = im.emit1("Reshape", {y}, {{"shape", std::vector<int64_t>{count}}});
  const auto last = static_cast<int64_t>(xs.size()) - 1;
  ValueId z = im.emit1("Gather", {x, y}, {{"axis", last}});
  if (xs.size() == 1) z = im.emit1("Reshape", {z}, {{"shape", std::vector<int64_t>{1, count}}});
  im.bind(n, 0, z);
}

}  // namespace ampx::onnx_io

namespace ampx::onnx_io {
namespace {

// A LabelEncoder key or value list: `name`_floats (f32), `name`_int64s
// (i64) or `name`_tensor (ml 4, its own type); strings are not ampx types.
struct Column {
  DType dtype = DType::kF32;
  std::vector<double> values;
  bool given = false;
};

Column label_column(Importer& im, const onnx::NodeProto& n, const std::string& name) {
  Column c;
  for (const auto& a : n.attribute())
    if (a.name() == name + "_strings" ||
        (a.name() == name + "_tensor" && a.t().data_type() == onnx::TensorProto::STRING))
      im.fail(
          fmt::format("{} are strings, which ampx does not support (numeric {} are)", name, name));
  if (const auto f = im.attr_floats(n, (name + "_floats").c_str())) {
    c = {DType::kF32, {f->begin(), f->end()}, true};
  } else if (const auto i = im.attr_ints(n, (name + "_int64s").c_str())) {
    c = {DType::kI64, {}, true};
    for (int64_t v : *i) c.values.push_back(static_cast<double>(v));
  } else if (const auto* t = im.attr_tensor(n, (name + "_tensor").c_str())) {
    TensorData d = read_tensor(*t, im.base_dir(), fmt::format("attribute '{}_tensor'", name),
                               im.max_tensor_bytes());
    c = {d.type.dtype, to_doubles(HostTensor{"", d.type, std::move(d.bytes)}), true};
  }
  return c;
}

ValueId column_constant(Importer& im, const std::vector<double>& v, Shape shape, DType dt) {
  std::vector<std::byte> bytes(v.size() * 8);
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  const ValueId c = im.constant({DType::kF64, std::move(shape)}, std::move(bytes));
  return dt == DType::kF64 ? c : im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
}

}  // namespace

// LabelEncoder (ml 2+) with numeric keys and values: each element's
// matching key found by an Equal against the [K] keys (the last of equal
// keys, as ONNX's reference's dict keeps), its value gathered, the default
// where none matches (a NaN matches no key, as the reference). The work is
// elements x K.
void label_encoder(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const TensorType xt = im.type(x);
  const Column keys = label_column(im, n, "keys"), values = label_column(im, n, "values");
  if (!keys.given || !values.given) im.fail("needs numeric keys and values");
  if (keys.values.size() != values.values.size() || keys.values.empty())
    im.fail(fmt::format("has {} keys and {} values", keys.values.size(), values.values.size()));
  if (keys.dtype != xt.dtype)
    im.fail(fmt::format("X is {}, its keys are {}", dtype_name(xt.dtype), dtype_name(keys.dtype)));
  double fallback = values.dtype == DType::kI64 ? -1.0 : 0.0;  // ONNX's defaults (-0.0 for floats)
  if (values.dtype == DType::kF32 && !im.attr_tensor(n, "default_tensor"))
    fallback = im.attr_float_or(n, "default_float", -0.0F);
  if (values.dtype == DType::kI64 && !im.attr_tensor(n, "default_tensor"))
    fallback = static_cast<double>(im.attr_int_or(n, "default_int64", -1));
  if (const auto* t = im.attr_tensor(n, "default_tensor")) {
    TensorData d =
        read_tensor(*t, im.base_dir(), "attribute 'default_tensor'", im.max_tensor_bytes());
    const auto v = to_doubles(HostTensor{"", d.type, std::move(d.bytes)});
    if (v.size() != 1 || d.type.dtype != values.dtype)
      im.fail("default_tensor must hold one value of the values' type");
    fallback = v[0];
  }
  const auto k = static_cast<int64_t>(keys.values.size());
  Shape column = xt.shape, table = xt.shape;
  column.push_back(1);
  table.push_back(k);
  im.check_size({DType::kF32, table}, "the key comparison");
  const ValueId xc =
      im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>(column.begin(), column.end())}});
  const ValueId hit =
      im.emit1("Cast", {im.emit1("Equal", {xc, column_constant(im, keys.values, {k}, keys.dtype)})},
               {{"to", int64_t(to_c(DType::kF32))}});
  const auto last = static_cast<int64_t>(table.size()) - 1;
  const ValueId at =
      im.emit1("ArgMax", {hit},
               {{"axis", last}, {"keepdims", int64_t{0}}, {"select_last_index", int64_t{1}}});
  const ValueId found =
      im.emit1("Cast",
               {im.emit1("ReduceMax", {hit},
                         {{"axes", std::vector<int64_t>{last}}, {"keepdims", int64_t{0}}})},
               {{"to", int64_t(to_c(DType::kBool))}});
  const ValueId value = im.emit1(
      "Gather", {column_constant(im, values.values, {k}, values.dtype), at}, {{"axis", 0}});
  im.bind(n, 0,
          im.emit1("Where", {found, value, column_constant(im, {fallback}, {}, values.dtype)}));
}

}  // namespace ampx::onnx_io
