// Unique, evaluated at import (docs/ONNX.md): how many unique elements (or
// slices along `axis`) there are depends on the input's values, and ampx
// plans fixed shapes, so like NonZero it is computed here where the input
// is known (a constant, a value that folds, or a small graph input whose
// value the caller gives) and its four outputs become constants; otherwise
// the import is refused. The results are ONNX's reference (numpy.unique):
// Y sorted ascending, or (sorted=0) in order of first occurrence; indices
// the first occurrences; inverse_indices and counts.
#include <fmt/format.h>
#include <ampx/exec/host_tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

// The elements as ordered keys: floats as doubles (f16 and bf16 exactly;
// -0 equals 0, NaNs equal each other and sort last, as numpy.unique), and
// integers in 128 bits (int64 and uint64 exactly).
class Keys {
 public:
  Keys(const TensorType& t, const std::vector<std::byte>& data) : float_(is_float(t.dtype)) {
    if (float_) {
      floats_ = to_doubles(HostTensor{"", t, data});
      return;
    }
    const size_t es = dtype_size(t.dtype), count = data.size() / es;
    const bool sign = t.dtype == DType::kI8 || t.dtype == DType::kI16 || t.dtype == DType::kI32 ||
                      t.dtype == DType::kI64;
    ints_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      uint64_t u = 0;
      std::memcpy(&u, data.data() + i * es, es);  // little-endian
      if (sign && es < 8 && (u >> (8 * es - 1)) != 0) u |= ~uint64_t{0} << (8 * es);
      ints_[i] = sign ? __int128{static_cast<int64_t>(u)} : __int128{u};
    }
  }
  // -1, 0 or 1 as element a orders before, with or after element b.
  int compare(size_t a, size_t b) const {
    if (!float_) return ints_[a] < ints_[b] ? -1 : ints_[b] < ints_[a] ? 1 : 0;
    const double x = floats_[a], y = floats_[b];
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) - std::isnan(y);
    return x < y ? -1 : y < x ? 1 : 0;
  }

 private:
  bool float_;
  std::vector<double> floats_;
  std::vector<__int128> ints_;
};

// The input seen as [outer, length, inner]: `length` slices (elements when
// there is no axis) of outer * inner elements each.
struct Slicing {
  int64_t outer = 1, length = 1, inner = 1;
  size_t at(int64_t o, int64_t i, int64_t in) const {
    return static_cast<size_t>((o * length + i) * inner + in);
  }
};

int compare_slices(const Keys& keys, const Slicing& s, int64_t a, int64_t b) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t in = 0; in < s.inner; ++in)
      if (const int c = keys.compare(s.at(o, a, in), s.at(o, b, in)); c != 0) return c;
  return 0;
}

struct Groups {
  std::vector<int64_t> first;    // per unique slice: its first occurrence
  std::vector<int64_t> counts;   // per unique slice
  std::vector<int64_t> inverse;  // per slice: its unique slice
};

Groups group(const Keys& keys, const Slicing& s, bool sorted) {
  std::vector<int64_t> order(static_cast<size_t>(s.length));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare_slices(keys, s, a, b) < 0; });
  Groups g;
  g.inverse.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare_slices(keys, s, order[i - 1], order[i]) != 0) {
      g.first.push_back(order[i]);  // stable: the group's lowest index
      g.counts.push_back(0);
    }
    g.inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(g.first.size() - 1);
    ++g.counts.back();
  }
  if (sorted) return g;
  // Renumber the groups by first occurrence.
  std::vector<int64_t> by_first(g.first.size());
  std::iota(by_first.begin(), by_first.end(), 0);
  std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
    return g.first[static_cast<size_t>(a)] < g.first[static_cast<size_t>(b)];
  });
  std::vector<int64_t> rank(by_first.size());
  Groups r;
  for (size_t k = 0; k < by_first.size(); ++k) {
    rank[static_cast<size_t>(by_first[k])] = static_cast<int64_t>(k);
    r.first.push_back(g.first[static_cast<size_t>(by_first[k])]);
    r.counts.push_back(g.counts[static_cast<size_t>(by_first[k])]);
  }
  for (int64_t i : g.inverse) r.inverse.push_back(rank[static_cast<size_t>(i)]);
  return r;
}

}  // namespace

void unique(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const TensorType type = im.type(x);
  const ConstantData known = im.value_for_output_shape(n, 0, "the input");
  const auto rank = static_cast<int64_t>(type.shape.size());
  const auto axis_attr = im.attr_int(n, "axis");
  Slicing s;
  Shape y_shape;
  int64_t axis = 0;
  if (!axis_attr) {
    s.length = element_count(type.shape);
  } else {
    axis = *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
    if (axis < 0 || axis >= rank)
      im.fail(fmt::format("axis {} is out of range for rank {}", *axis_attr, rank));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t e = type.shape[static_cast<size_t>(d)];
      (d < axis ? s.outer : d == axis ? s.length : s.inner) *= e;
    }
  }
  const Groups g = group(Keys(type, *known), s, im.attr_int_or(n, "sorted", 1) != 0);
  const auto k = static_cast<int64_t>(g.first.size());
  y_shape = axis_attr ? type.shape : Shape{k};
  if (axis_attr) y_shape[static_cast<size_t>(axis)] = k;
  // Y: the unique slices' bytes, gathered.
  const size_t es = dtype_size(type.dtype);
  std::vector<std::byte> y(static_cast<size_t>(s.outer * k * s.inner) * es);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(y.data() + static_cast<size_t>((o * k + j) * s.inner) * es,
                  known->data() + s.at(o, g.first[static_cast<size_t>(j)], 0) * es,
                  static_cast<size_t>(s.inner) * es);
  im.bind(n, 0, im.constant(TensorType{type.dtype, y_shape}, std::move(y)));
  im.bind(n, 1, im.constant_i64(g.first, {k}));
  im.bind(n, 2, im.constant_i64(g.inverse, {s.length}));
  im.bind(n, 3, im.constant_i64(g.counts, {k}));
}

}  // namespace ampx::onnx_io
