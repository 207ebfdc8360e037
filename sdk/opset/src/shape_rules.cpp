#include "ampx/opset/shape_rules.hpp"

#include <algorithm>
#include <limits>

namespace ampx::opset {

std::string dims_str(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::optional<Dims> broadcast_shapes(const Dims& a, const Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t window_out(int64_t in, int64_t kernel, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                   int64_t dilation, bool ceil_mode) {
  // Attribute values are untrusted: do the arithmetic in a wider type.
  const __int128 eff = static_cast<__int128>(dilation) * (kernel - 1) + 1;
  const __int128 span = static_cast<__int128>(in) + pad_lo + pad_hi - eff;
  if (span < 0 || stride < 1) return 0;
  __int128 out = ceil_mode ? (span + stride - 1) / stride + 1 : span / stride + 1;
  if (ceil_mode && (out - 1) * stride >= static_cast<__int128>(in) + pad_lo) --out;
  return out > std::numeric_limits<int64_t>::max() ? 0 : static_cast<int64_t>(out);
}

SliceAxis slice_axis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceAxis r;
  if (dim == 0 || step == 0) return r;
  // Negative values count from the end (written to avoid overflow on INT64_MIN).
  if (start < 0) start = start < -dim ? -1 : start + dim;
  if (end < 0) end = end < -dim ? -1 : end + dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) r.length = 1 + (end - start - 1) / step;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    if (start > end) r.length = 1 + (start - end - 1) / (step == INT64_MIN ? INT64_MAX : -step);
  }
  r.start = start;
  return r;
}

}  // namespace ampx::opset
