// Output types of the indexing, sorting and running-sum ops (docs/OPS.md):
// Mod, CumSum, CumProd, TopK, GatherElements, GatherND, ScatterND and GridSample, with ONNX's
// shape rules. The index values themselves are checked by the kernels at
// run time (they are data).
#include <algorithm>
#include <string>

#include "infer_common.hpp"

namespace ampx::opset::detail {
namespace {

bool is_int(ampx_dtype dt) {
  return dt == AMPX_DTYPE_I64 || dt == AMPX_DTYPE_I32;
}

void require_numeric(const Node& c, const TensorSpec& t, const char* what) {
  AMPX_CHECK(is_float_dtype(t.dtype) || plugin_support::is_integer_dtype(t.dtype),
             std::string(what) + " must be a float or an integer, got " + dtype_name(t.dtype));
}

Outputs mod(const Node& c) {
  require_same_dtype(c, c.in);
  require_numeric(c, c.in[0], "input");
  // fmod=1: C's remainder (the dividend's sign); fmod=0: the remainder of
  // the floored quotient (the divisor's sign, Python's %), for floats too
  // (ONNX Mod 28, with its signed-zero and infinity cases).
  (void)flag_attr(c, "fmod");
  auto s = broadcast_shapes(c.in[0].dims, c.in[1].dims);
  AMPX_CHECK(s.has_value(), "shapes " + dims_str(c.in[0].dims) + " and " + dims_str(c.in[1].dims) +
                                " do not broadcast");
  return std::vector<TensorSpec>{{c.in[0].dtype, *s}};
}

Outputs cum_sum(const Node& c) {
  const TensorSpec& x = c.in[0];
  require_numeric(c, x, "input");
  AMPX_CHECK(!x.dims.empty(),
             "input is a scalar; " + std::string(c.v.op_type()) + " needs rank >= 1");
  (void)normalize_axis(c, c.v.get_int("axis", 0), static_cast<int64_t>(x.dims.size()), "axis");
  (void)flag_attr(c, "exclusive");
  (void)flag_attr(c, "reverse");
  return std::vector<TensorSpec>{x};
}

Outputs top_k(const Node& c) {
  const TensorSpec& x = c.in[0];
  require_numeric(c, x, "input");
  AMPX_CHECK(!x.dims.empty(), "input is a scalar; TopK needs rank >= 1");
  const auto axis = static_cast<size_t>(
      normalize_axis(c, c.v.get_int("axis", -1), static_cast<int64_t>(x.dims.size()), "axis"));
  const int64_t k = c.v.get_int("k", 0);
  AMPX_CHECK(k >= 0 && k <= x.dims[axis], "k = " + std::to_string(k) + " is outside [0, " +
                                              std::to_string(x.dims[axis]) + "], the axis' size");
  (void)flag_attr(c, "sorted");
  if (c.v.has_attr("largest")) {
    const int64_t l = c.v.get_int("largest", 1);
    AMPX_CHECK(l == 0 || l == 1, "attribute 'largest' must be 0 or 1");
  }
  Dims out = x.dims;
  out[axis] = k;
  return std::vector<TensorSpec>{{x.dtype, out}, {AMPX_DTYPE_I64, out}};
}

Outputs gather_elements(const Node& c) {
  const TensorSpec &x = c.in[0], &idx = c.in[1];
  AMPX_CHECK(is_int(idx.dtype),
             "indices must be i64 or i32, got " + std::string(dtype_name(idx.dtype)));
  const auto rank = static_cast<int64_t>(x.dims.size());
  AMPX_CHECK(rank >= 1, "data is a scalar; GatherElements needs rank >= 1");
  AMPX_CHECK(idx.dims.size() == x.dims.size(),
             "indices " + dims_str(idx.dims) + " must have the rank of data " + dims_str(x.dims));
  const auto axis = static_cast<size_t>(normalize_axis(c, c.v.get_int("axis", 0), rank, "axis"));
  for (size_t d = 0; d < x.dims.size(); ++d)
    AMPX_CHECK(d == axis || idx.dims[d] <= x.dims[d],
               "indices " + dims_str(idx.dims) + " are larger than data " + dims_str(x.dims) +
                   " in dimension " + std::to_string(d));
  return std::vector<TensorSpec>{{x.dtype, idx.dims}};
}

// GatherND and ScatterND: the batch dims b, the index depth (the last
// dimension of the indices) and the shape of one gathered slice.
struct NdIndex {
  int64_t batch = 0;
  int64_t depth = 0;
};

NdIndex nd_index(const Node& c, const Dims& data, const TensorSpec& idx, int64_t batch) {
  AMPX_CHECK(is_int(idx.dtype),
             "indices must be i64 or i32, got " + std::string(dtype_name(idx.dtype)));
  const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.dims.size());
  AMPX_CHECK(r >= 1 && q >= 1, "data " + dims_str(data) + " and indices " + dims_str(idx.dims) +
                                   " must have rank >= 1");
  AMPX_CHECK(batch >= 0 && batch < std::min(r, q),
             "batch_dims = " + std::to_string(batch) + " must be below both ranks");
  for (int64_t d = 0; d < batch; ++d)
    AMPX_CHECK(data[static_cast<size_t>(d)] == idx.dims[static_cast<size_t>(d)],
               "data " + dims_str(data) + " and indices " + dims_str(idx.dims) +
                   " differ in batch dimension " + std::to_string(d));
  const int64_t depth = idx.dims.back();
  AMPX_CHECK(depth >= 1 && depth <= r - batch,
             "the indices' last dimension " + std::to_string(depth) + " must be in [1, " +
                 std::to_string(r - batch) + "] for data " + dims_str(data));
  return {batch, depth};
}

// indices.shape[:-1] + data.shape[batch + depth:]
Dims nd_slices_shape(const Dims& data, const Dims& idx, const NdIndex& nd) {
  Dims out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + nd.batch + nd.depth, data.end());
  return out;
}

Outputs gather_nd(const Node& c) {
  const TensorSpec &x = c.in[0], &idx = c.in[1];
  const NdIndex nd = nd_index(c, x.dims, idx, c.v.get_int("batch_dims", 0));
  return std::vector<TensorSpec>{{x.dtype, nd_slices_shape(x.dims, idx.dims, nd)}};
}

Outputs scatter_nd(const Node& c) {
  const TensorSpec &x = c.in[0], &idx = c.in[1], &upd = c.in[2];
  const NdIndex nd = nd_index(c, x.dims, idx, 0);
  const Dims want = nd_slices_shape(x.dims, idx.dims, nd);
  AMPX_CHECK(upd.dims == want, "updates have shape " + dims_str(upd.dims) + ", expected " +
                                   dims_str(want) + " for data " + dims_str(x.dims) +
                                   " and indices " + dims_str(idx.dims));
  const std::string r = c.v.get_string("reduction", "none");
  AMPX_CHECK(r == "none" || r == "add" || r == "mul" || r == "max" || r == "min",
             "attribute 'reduction' must be none, add, mul, max or min, got '" + r + "'");
  return std::vector<TensorSpec>{x};
}

// GridSample: X [N, C, D1..Dk] (k >= 1), grid [N, O1..Ok, k] -> Y [N, C,
// O1..Ok], one float dtype.
Outputs grid_sample(const Node& c) {
  const TensorSpec &x = c.in[0], &g = c.in[1];
  require_same_dtype(c, c.in);
  require_float(c, x, "input X");
  AMPX_CHECK(x.dims.size() >= 3,
             "input X must have rank >= 3 ([N, C, D1, ...]), got " + std::to_string(x.dims.size()));
  const size_t k = x.dims.size() - 2;
  AMPX_CHECK(
      g.dims.size() == k + 2 && g.dims[0] == x.dims[0] && g.dims.back() == static_cast<int64_t>(k),
      "grid must be [N, O1.." + std::to_string(k) + ", " + std::to_string(k) + "] for X " +
          dims_str(x.dims) + ", got " + dims_str(g.dims));
  for (size_t i = 2; i < x.dims.size(); ++i)
    AMPX_CHECK(x.dims[i] > 0, "cannot sample an empty spatial dimension of X " + dims_str(x.dims));
  const std::string mode = c.v.get_string("mode", "linear");
  AMPX_CHECK(mode == "linear" || mode == "nearest" || mode == "cubic",
             "mode must be 'linear', 'nearest' or 'cubic', got '" + mode + "'");
  const std::string pad = c.v.get_string("padding_mode", "zeros");
  AMPX_CHECK(pad == "zeros" || pad == "border" || pad == "reflection",
             "padding_mode must be 'zeros', 'border' or 'reflection', got '" + pad + "'");
  const int64_t ac = c.v.get_int("align_corners", 0);
  AMPX_CHECK(ac == 0 || ac == 1, "attribute 'align_corners' must be 0 or 1");
  Dims y{x.dims[0], x.dims[1]};
  y.insert(y.end(), g.dims.begin() + 1, g.dims.end() - 1);
  return std::vector<TensorSpec>{{x.dtype, y}};
}

}  // namespace

Outputs infer_index(const Node& c, std::string_view op) {
  if (op == "Mod") return mod(c);
  if (op == "CumSum" || op == "CumProd") return cum_sum(c);
  if (op == "TopK") return top_k(c);
  if (op == "GatherElements") return gather_elements(c);
  if (op == "GatherND") return gather_nd(c);
  if (op == "ScatterND") return scatter_nd(c);
  if (op == "GridSample") return grid_sample(c);
  return std::nullopt;
}

}  // namespace ampx::opset::detail
