// Data movement (bit-exact in any dtype): Reshape, Flatten, Dropout,
// Transpose, Concat, Slice, Gather, Split, Expand and Pad; and Cast.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ampx/half.hpp"
#include "ampx/opset/shape_rules.hpp"
#include "common.hpp"

namespace ampx::reference::detail {
namespace {

using plugin_support::dtype_name;
using plugin_support::dtype_size;

// ------------------------------------------------------------- plain copy

class CopyKernel final : public CpuKernel {
 public:
  explicit CopyKernel(size_t bytes) : bytes_(bytes) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    if (bytes_ && out[0] != in[0]) std::memmove(out[0], in[0], bytes_);
  }

 private:
  size_t bytes_;
};

std::unique_ptr<CpuKernel> copy_kernel(const Ctx& c) {
  return std::make_unique<CopyKernel>(static_cast<size_t>(c.in[0].numel) * dtype_size(c.dtype));
}

// ---------------------------------------------------------- strided copy

// Copies a strided view of `src` (dims, element strides) into dense `dst`.
// Dims of size 1 are dropped and contiguous neighbours merged; a unit inner
// stride becomes memcpy runs.
class StridedCopy {
 public:
  StridedCopy() = default;
  StridedCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, size_t es)
      : es_(es) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 1) continue;
      if (!dims_.empty() && strides_.back() == strides[i] * dims[i]) {
        dims_.back() *= dims[i];
        strides_.back() = strides[i];
      } else {
        dims_.push_back(dims[i]);
        strides_.push_back(strides[i]);
      }
    }
    count_ = product(dims);
  }

  void run(const void* src_v, void* dst_v) const {
    if (count_ == 0) return;
    const auto* src = static_cast<const unsigned char*>(src_v);
    auto* dst = static_cast<unsigned char*>(dst_v);
    if (dims_.empty()) {
      std::memcpy(dst, src, es_);
      return;
    }
    switch (es_) {
      case 1:
        return go<uint8_t>(src, dst);
      case 2:
        return go<uint16_t>(src, dst);
      case 4:
        return go<uint32_t>(src, dst);
      default:
        return go<uint64_t>(src, dst);
    }
  }

 private:
  template <class E>
  void go(const unsigned char* src, unsigned char* dst) const {
    const size_t r = dims_.size();
    const int64_t inner = dims_.back(), is = strides_.back();
    const int64_t rows = count_ / inner;
    std::vector<int64_t> idx(r - 1, 0);
    int64_t off = 0;  // source element offset of the current row
    for (int64_t row = 0; row < rows; ++row) {
      const E* s = reinterpret_cast<const E*>(src) + off;
      E* d = reinterpret_cast<E*>(dst) + row * inner;
      if (is == 1) {
        std::memcpy(d, s, static_cast<size_t>(inner) * sizeof(E));
      } else {
        for (int64_t i = 0; i < inner; ++i) d[i] = s[i * is];
      }
      for (size_t k = r - 1; k-- > 0;) {
        off += strides_[k];
        if (++idx[k] < dims_[k]) break;
        off -= strides_[k] * dims_[k];
        idx[k] = 0;
      }
    }
  }

  std::vector<int64_t> dims_, strides_;
  int64_t count_ = 0;
  size_t es_ = 1;
};

class StridedKernel final : public CpuKernel {
 public:
  StridedKernel(StridedCopy copy, int64_t src_offset_bytes)
      : copy_(std::move(copy)), offset_(src_offset_bytes) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    copy_.run(static_cast<const unsigned char*>(in[0]) + offset_, out[0]);
  }

 private:
  StridedCopy copy_;
  int64_t offset_;
};

// ------------------------------------------------------------- Concat

class ConcatKernel final : public CpuKernel {
 public:
  ConcatKernel(int64_t outer, std::vector<size_t> chunk_bytes)
      : outer_(outer), chunks_(std::move(chunk_bytes)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    auto* dst = static_cast<unsigned char*>(out[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (size_t i = 0; i < chunks_.size(); ++i) {
        if (!chunks_[i]) continue;
        std::memcpy(dst, static_cast<const unsigned char*>(in[i]) + o * chunks_[i], chunks_[i]);
        dst += chunks_[i];
      }
    }
  }

 private:
  int64_t outer_;
  std::vector<size_t> chunks_;
};

// ------------------------------------------------------------- Gather

class GatherKernel final : public CpuKernel {
 public:
  GatherKernel(std::string where, int64_t outer, int64_t axis_len, int64_t n_idx,
               size_t inner_bytes, bool idx64)
      : where_(std::move(where)),
        outer_(outer),
        len_(axis_len),
        n_idx_(n_idx),
        inner_(inner_bytes),
        idx64_(idx64) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* data = static_cast<const unsigned char*>(in[0]);
    auto* dst = static_cast<unsigned char*>(out[0]);
    // Validate every index before writing anything.
    idx_.resize(static_cast<size_t>(n_idx_));
    for (int64_t j = 0; j < n_idx_; ++j)
      idx_[static_cast<size_t>(j)] = checked_index(where_, in[1], idx64_, j, len_);
    for (int64_t o = 0; o < outer_; ++o) {
      const unsigned char* base = data + static_cast<size_t>(o * len_) * inner_;
      for (int64_t j = 0; j < n_idx_; ++j) {
        if (inner_)
          std::memcpy(dst, base + static_cast<size_t>(idx_[static_cast<size_t>(j)]) * inner_,
                      inner_);
        dst += inner_;
      }
    }
  }

 private:
  std::string where_;
  int64_t outer_, len_, n_idx_;
  size_t inner_;
  bool idx64_;
  std::vector<int64_t> idx_;
};

// -------------------------------------------------------------- Split

// Output i takes chunk_i bytes of every one of the `outer` rows.
class SplitKernel final : public CpuKernel {
 public:
  SplitKernel(int64_t outer, std::vector<size_t> chunk_bytes)
      : outer_(outer), chunks_(std::move(chunk_bytes)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* src = static_cast<const unsigned char*>(in[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (size_t i = 0; i < chunks_.size(); ++i) {
        if (!chunks_[i]) continue;
        std::memcpy(static_cast<unsigned char*>(out[i]) + o * chunks_[i], src, chunks_[i]);
        src += chunks_[i];
      }
    }
  }

 private:
  int64_t outer_;
  std::vector<size_t> chunks_;
};

// ---------------------------------------------------------------- Pad

// Per output dim, the source index of each output coordinate (-1: the
// constant). Visits the output row by row (every dimension but the last with
// an odometer), each row as one gather through the last dimension's map.
class PadKernel final : public CpuKernel {
 public:
  PadKernel(std::vector<int64_t> out_dims, std::vector<std::vector<int64_t>> src,
            std::vector<int64_t> in_strides, std::vector<unsigned char> value, int64_t n)
      : dims_(std::move(out_dims)),
        src_(std::move(src)),
        strides_(std::move(in_strides)),
        value_(std::move(value)),
        n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    switch (value_.size()) {
      case 1:
        return run_as<uint8_t>(in[0], out[0]);
      case 2:
        return run_as<uint16_t>(in[0], out[0]);
      case 4:
        return run_as<uint32_t>(in[0], out[0]);
      default:
        return run_as<uint64_t>(in[0], out[0]);
    }
  }

 private:
  template <class T>
  void run_as(const void* in, void* out) const {
    const auto* x = static_cast<const T*>(in);
    auto* y = static_cast<T*>(out);
    T value;
    std::memcpy(&value, value_.data(), sizeof(T));
    const size_t r = dims_.size();
    if (r == 0 || n_ == 0) {
      if (n_) y[0] = x[0];
      return;
    }
    const int64_t row = dims_[r - 1];
    const int64_t* last = src_[r - 1].data();
    const int64_t last_stride = strides_[r - 1];
    std::vector<int64_t> idx(r - 1, 0);
    for (int64_t base_out = 0; base_out < n_; base_out += row) {
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d + 1 < r && inside; ++d) {
        const int64_t k = src_[d][static_cast<size_t>(idx[d])];
        inside = k >= 0;
        off += k * strides_[d];
      }
      T* yr = y + base_out;
      if (!inside) {
        std::fill(yr, yr + row, value);
      } else {
        for (int64_t j = 0; j < row; ++j)
          yr[j] = last[j] >= 0 ? x[off + last[j] * last_stride] : value;
      }
      for (size_t d = r - 1; d-- > 0;) {
        if (++idx[d] < dims_[d]) break;
        idx[d] = 0;
      }
    }
  }

  std::vector<int64_t> dims_;
  std::vector<std::vector<int64_t>> src_;
  std::vector<int64_t> strides_;
  std::vector<unsigned char> value_;
  int64_t n_;
};

// --------------------------------------------------------------- Cast

// Float to 16-bit with one rounding: to_float_round_odd (ampx/half.hpp).

// Every value is read either as a double (float sources, exact) or as an
// int64 (integer and bool sources, exact) and written with one rounding.
template <class T>
T float_to_int(double d) {  // trunc toward zero, NaN -> 0, saturating
  if (std::isnan(d)) return 0;
  if (d <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

class CastKernel final : public CpuKernel {
 public:
  CastKernel(ampx_dtype from, ampx_dtype to, int64_t n) : from_(from), to_(to), n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const void* s = in[0];
    void* d = out[0];
    if (from_ == to_) {
      std::memcpy(d, s, static_cast<size_t>(n_) * dtype_size(from_));
      return;
    }
    // Fast paths for the casts the planner inserts.
    if (from_ == AMPX_DTYPE_F32 && to_ == AMPX_DTYPE_F16) {
      for (int64_t i = 0; i < n_; ++i)
        static_cast<uint16_t*>(d)[i] = float_to_f16_bits(static_cast<const float*>(s)[i]);
      return;
    }
    if (from_ == AMPX_DTYPE_F32 && to_ == AMPX_DTYPE_BF16) {
      for (int64_t i = 0; i < n_; ++i)
        static_cast<uint16_t*>(d)[i] = float_to_bf16_bits(static_cast<const float*>(s)[i]);
      return;
    }
    if (plugin_support::is_float_dtype(from_)) {
      for (int64_t i = 0; i < n_; ++i) store(d, i, load_float(s, i));
    } else if (from_ == AMPX_DTYPE_U64) {  // above INT64_MAX: not through int64_t
      for (int64_t i = 0; i < n_; ++i) store(d, i, static_cast<const uint64_t*>(s)[i]);
    } else {
      for (int64_t i = 0; i < n_; ++i) store(d, i, load_int(s, i));
    }
  }

 private:
  double load_float(const void* p, int64_t i) const {
    switch (from_) {
      case AMPX_DTYPE_F32:
        return static_cast<const float*>(p)[i];
      case AMPX_DTYPE_F16:
        return f16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
      case AMPX_DTYPE_BF16:
        return bf16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
      default:
        return static_cast<const double*>(p)[i];
    }
  }
  int64_t load_int(const void* p, int64_t i) const {
    switch (from_) {
      case AMPX_DTYPE_I64:
        return static_cast<const int64_t*>(p)[i];
      case AMPX_DTYPE_I32:
        return static_cast<const int32_t*>(p)[i];
      case AMPX_DTYPE_I8:
        return static_cast<const int8_t*>(p)[i];
      case AMPX_DTYPE_U8:
        return static_cast<const uint8_t*>(p)[i];
      case AMPX_DTYPE_I16:
        return static_cast<const int16_t*>(p)[i];
      case AMPX_DTYPE_U16:
        return static_cast<const uint16_t*>(p)[i];
      case AMPX_DTYPE_U32:
        return static_cast<const uint32_t*>(p)[i];
      default:
        return static_cast<const uint8_t*>(p)[i] != 0;  // bool
    }
  }
  // One store for both source kinds: V is double (float sources) or int64_t
  // (integer sources; uint64_t for u64 ones). They differ only in how an integer target is reached:
  // floats truncate toward zero and saturate, integer narrowing wraps (two's
  // complement), as C++ and NumPy do.
  template <typename V>
  void store(void* p, int64_t i, V v) const {
    auto to_int = [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<V>)
        return float_to_int<T>(v);
      else
        return static_cast<T>(v);
    };
    switch (to_) {
      case AMPX_DTYPE_F32:
        static_cast<float*>(p)[i] = static_cast<float>(v);
        break;
      case AMPX_DTYPE_F16:
        static_cast<uint16_t*>(p)[i] = float_to_f16_bits(to_float_round_odd(v));
        break;
      case AMPX_DTYPE_BF16:
        static_cast<uint16_t*>(p)[i] = float_to_bf16_bits(to_float_round_odd(v));
        break;
      case AMPX_DTYPE_F64:
        static_cast<double*>(p)[i] = static_cast<double>(v);
        break;
      case AMPX_DTYPE_I64:
        static_cast<int64_t*>(p)[i] = to_int(int64_t{});
        break;
      case AMPX_DTYPE_I32:
        static_cast<int32_t*>(p)[i] = to_int(int32_t{});
        break;
      case AMPX_DTYPE_I8:
        static_cast<int8_t*>(p)[i] = to_int(int8_t{});
        break;
      case AMPX_DTYPE_U8:
        static_cast<uint8_t*>(p)[i] = to_int(uint8_t{});
        break;
      case AMPX_DTYPE_I16:
        static_cast<int16_t*>(p)[i] = to_int(int16_t{});
        break;
      case AMPX_DTYPE_U16:
        static_cast<uint16_t*>(p)[i] = to_int(uint16_t{});
        break;
      case AMPX_DTYPE_U32:
        static_cast<uint32_t*>(p)[i] = to_int(uint32_t{});
        break;
      case AMPX_DTYPE_U64:
        static_cast<uint64_t*>(p)[i] = to_int(uint64_t{});
        break;
      default:
        static_cast<uint8_t*>(p)[i] = v != 0 ? 1 : 0;  // bool; NaN -> 1
        break;
    }
  }

  ampx_dtype from_, to_;
  int64_t n_;
};

}  // namespace

// ------------------------------------------------------------ factories

std::unique_ptr<CpuKernel> make_reshape(Ctx& c) {
  c.arity(1, 1, 1);
  c.v.require_attr("shape");
  const std::vector<int64_t> shape = c.v.get_ints("shape");
  const auto& in = c.in[0].dims;
  std::vector<int64_t> want(shape.size());
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (s == 0) {
      if (i >= in.size())
        c.fail("attribute 'shape' copies dim " + std::to_string(i) +
               " (0) but the input has rank " + std::to_string(in.size()));
      want[i] = in[i];
    } else if (s == -1) {
      if (infer >= 0) c.fail("attribute 'shape' has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    } else if (s < 0) {
      c.fail("attribute 'shape' has invalid value " + std::to_string(s));
    } else {
      want[i] = s;
    }
    known *= want[i];
  }
  if (infer >= 0) {
    if (known == 0 || c.in[0].numel % known != 0) {
      c.fail("cannot infer the -1 dim of 'shape' " + dims_str(shape) + " from input shape " +
             dims_str(in));
    }
    want[static_cast<size_t>(infer)] = c.in[0].numel / known;
  } else if (known != c.in[0].numel) {
    c.fail("attribute 'shape' " + dims_str(shape) + " has " + std::to_string(known) +
           " elements, the input " + dims_str(in) + " has " + std::to_string(c.in[0].numel));
  }
  c.dims(c.out[0], "output", want);
  return copy_kernel(c);
}

std::unique_ptr<CpuKernel> make_flatten(Ctx& c) {
  c.arity(1, 1, 1);
  const int64_t r = c.in[0].rank();
  int64_t axis = c.v.get_int("axis", 1);
  if (axis < -r || axis > r) {
    c.fail("attribute 'axis' = " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(r));
  }
  if (axis < 0) axis += r;
  const auto a = static_cast<size_t>(axis);
  c.dims(c.out[0], "output", {product(c.in[0].dims, 0, a), product(c.in[0].dims, a)});
  return copy_kernel(c);
}

std::unique_ptr<CpuKernel> make_dropout(Ctx& c) {
  c.arity(1, 1, 1);
  (void)c.v.get_float("ratio", 0.5);  // validates the kind; ignored at inference
  c.dims(c.out[0], "output", c.in[0].dims);
  return copy_kernel(c);
}

std::unique_ptr<CpuKernel> make_transpose(Ctx& c) {
  c.arity(1, 1, 1);
  const auto& in = c.in[0].dims;
  const size_t r = in.size();
  std::vector<int64_t> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
  perm = c.v.get_ints("perm", perm);
  if (perm.size() != r) {
    c.fail("attribute 'perm' has " + std::to_string(perm.size()) + " values, expected " +
           std::to_string(r));
  }
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)]) {
      c.fail("attribute 'perm' " + dims_str(perm) + " is not a permutation of 0.." +
             std::to_string(r - 1));
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const std::vector<int64_t> s = dense_strides(in);
  std::vector<int64_t> want(r), strides(r);
  for (size_t i = 0; i < r; ++i) {
    want[i] = in[static_cast<size_t>(perm[i])];
    strides[i] = s[static_cast<size_t>(perm[i])];
  }
  c.dims(c.out[0], "output", want);
  return std::make_unique<StridedKernel>(StridedCopy(want, strides, dtype_size(c.dtype)), 0);
}

std::unique_ptr<CpuKernel> make_concat(Ctx& c) {
  c.arity(1, SIZE_MAX, 1);
  c.v.require_attr("axis");
  const auto& first = c.in[0].dims;
  const int64_t r = static_cast<int64_t>(first.size());
  if (r == 0) c.fail("input 0 is a scalar; Concat needs rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", 0), r, "axis"));
  std::vector<int64_t> want = first;
  want[axis] = 0;
  const size_t es = dtype_size(c.dtype);
  std::vector<size_t> chunks;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const auto& d = c.in[i].dims;
    bool ok = d.size() == first.size();
    for (size_t k = 0; ok && k < d.size(); ++k) ok = k == axis || d[k] == first[k];
    if (!ok) {
      c.fail("input " + std::to_string(i) + " has shape " + dims_str(d) +
             ", incompatible with input 0 " + dims_str(first) + " for axis " +
             std::to_string(axis));
    }
    want[axis] += d[axis];
    chunks.push_back(static_cast<size_t>(product(d, axis)) * es);
  }
  c.dims(c.out[0], "output", want);
  return std::make_unique<ConcatKernel>(product(first, 0, axis), std::move(chunks));
}

std::unique_ptr<CpuKernel> make_slice(Ctx& c) {
  c.arity(1, 1, 1);
  c.v.require_attr("starts");
  c.v.require_attr("ends");
  const auto& in = c.in[0].dims;
  const auto r = static_cast<int64_t>(in.size());
  const std::vector<int64_t> starts = c.v.get_ints("starts"), ends = c.v.get_ints("ends");
  const size_t n = starts.size();
  if (ends.size() != n) c.fail("attributes 'starts' and 'ends' differ in length");
  std::vector<int64_t> axes(n), steps(n, 1);
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  axes = c.v.get_ints("axes", axes);
  steps = c.v.get_ints("steps", steps);
  if (axes.size() != n) c.fail("attribute 'axes' differs in length from 'starts'");
  if (steps.size() != n) c.fail("attribute 'steps' differs in length from 'starts'");

  const std::vector<int64_t> s = dense_strides(in);
  std::vector<int64_t> want = in, strides = s;
  std::vector<bool> seen(in.size(), false);
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<size_t>(c.axis(axes[i], r, "axes"));
    if (seen[a]) c.fail("attribute 'axes' repeats axis " + std::to_string(a));
    seen[a] = true;
    const int64_t dim = in[a], step = steps[i];
    if (step == 0) c.fail("attribute 'steps' has a 0");
    // ONNX: negative values count from the end, then clamp.
    const opset::SliceAxis sa = opset::slice_axis(starts[i], ends[i], step, dim);
    const int64_t st = sa.start, len = sa.length;
    want[a] = len;
    if (len > 0) offset += st * s[a];
    strides[a] = len > 1 ? step * s[a] : 0;  // |step| may be huge when len <= 1
  }
  c.dims(c.out[0], "output", want);
  const size_t es = dtype_size(c.dtype);
  return std::make_unique<StridedKernel>(StridedCopy(want, strides, es),
                                         offset * static_cast<int64_t>(es));
}

std::unique_ptr<CpuKernel> make_gather(Ctx& c) {
  c.arity(2, 2, 1);
  const auto& d = c.in[0].dims;
  const auto r = static_cast<int64_t>(d.size());
  if (r == 0) c.fail("data is a scalar; Gather needs rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", 0), r, "axis"));
  std::vector<int64_t> want(d.begin(), d.begin() + static_cast<ptrdiff_t>(axis));
  want.insert(want.end(), c.in[1].dims.begin(), c.in[1].dims.end());
  want.insert(want.end(), d.begin() + static_cast<ptrdiff_t>(axis) + 1, d.end());
  c.dims(c.out[0], "output", want);
  if (d[axis] == 0 && c.in[1].numel > 0) c.fail("gathers from an empty axis");
  return std::make_unique<GatherKernel>(
      c.v.where(), product(d, 0, axis), d[axis], c.in[1].numel,
      static_cast<size_t>(product(d, axis + 1)) * dtype_size(c.dtype),
      c.in[1].dtype == AMPX_DTYPE_I64);
}

std::unique_ptr<CpuKernel> make_split(Ctx& c) {
  c.v.require_attr("split");
  const std::vector<int64_t> split = c.v.get_ints("split");
  if (split.empty()) c.fail("attribute 'split' is empty");
  c.arity(1, 1, split.size());
  const auto& d = c.in[0].dims;
  const auto r = static_cast<int64_t>(d.size());
  if (r == 0) c.fail("input is a scalar; Split needs rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", 0), r, "axis"));
  int64_t total = 0;
  std::vector<size_t> chunks;
  const size_t inner = static_cast<size_t>(product(d, axis + 1)) * dtype_size(c.dtype);
  for (size_t i = 0; i < split.size(); ++i) {
    if (split[i] < 0) c.fail("attribute 'split' has a negative size");
    total += split[i];
    std::vector<int64_t> want = d;
    want[axis] = split[i];
    c.dims(c.out[i], "output " + std::to_string(i), want);
    chunks.push_back(static_cast<size_t>(split[i]) * inner);
  }
  if (total != d[axis]) {
    c.fail("attribute 'split' " + dims_str(split) + " sums to " + std::to_string(total) +
           ", axis " + std::to_string(axis) + " has " + std::to_string(d[axis]));
  }
  return std::make_unique<SplitKernel>(product(d, 0, axis), std::move(chunks));
}

// ONNX bidirectional broadcast of the input with 'shape': a strided copy
// with stride 0 along the broadcast dims.
std::unique_ptr<CpuKernel> make_expand(Ctx& c) {
  c.arity(1, 1, 1);
  c.v.require_attr("shape");
  const std::vector<int64_t> shape = c.v.get_ints("shape");
  const auto& in = c.in[0].dims;
  const size_t r = std::max(in.size(), shape.size());
  std::vector<int64_t> want(r), full(r, 1);
  std::copy(in.begin(), in.end(), full.begin() + static_cast<ptrdiff_t>(r - in.size()));
  std::vector<int64_t> strides = dense_strides(full);
  for (size_t i = 0; i < r; ++i) {
    const int64_t ds = i + shape.size() >= r ? shape[i + shape.size() - r] : 1;
    if (ds < 0) c.fail("attribute 'shape' " + dims_str(shape) + " has a negative dimension");
    if (full[i] != ds && full[i] != 1 && ds != 1)
      c.fail("input shape " + dims_str(in) + " does not broadcast with " + dims_str(shape));
    want[i] = full[i] == 1 ? ds : full[i];
    if (full[i] == 1) strides[i] = 0;
  }
  c.dims(c.out[0], "output", want);
  return std::make_unique<StridedKernel>(StridedCopy(want, strides, dtype_size(c.dtype)), 0);
}

namespace {
// `v` stored in dtype `dt` (floats rounded to nearest even, integers
// truncated toward zero and saturated, bool: v != 0).
std::vector<unsigned char> encode_scalar(ampx_dtype dt, double v) {
  std::vector<unsigned char> b(dtype_size(dt));
  auto put = [&](auto x) { std::memcpy(b.data(), &x, sizeof x); };
  switch (dt) {
    case AMPX_DTYPE_F32:
      put(static_cast<float>(v));
      break;
    case AMPX_DTYPE_F16:
      put(float_to_f16_bits(to_float_round_odd(v)));
      break;
    case AMPX_DTYPE_BF16:
      put(float_to_bf16_bits(to_float_round_odd(v)));
      break;
    case AMPX_DTYPE_F64:
      put(v);
      break;
    case AMPX_DTYPE_I64:
      put(float_to_int<int64_t>(v));
      break;
    case AMPX_DTYPE_I32:
      put(float_to_int<int32_t>(v));
      break;
    case AMPX_DTYPE_I8:
      put(float_to_int<int8_t>(v));
      break;
    case AMPX_DTYPE_U8:
      put(float_to_int<uint8_t>(v));
      break;
    case AMPX_DTYPE_I16:
      put(float_to_int<int16_t>(v));
      break;
    case AMPX_DTYPE_U16:
      put(float_to_int<uint16_t>(v));
      break;
    case AMPX_DTYPE_U32:
      put(float_to_int<uint32_t>(v));
      break;
    case AMPX_DTYPE_U64:
      put(float_to_int<uint64_t>(v));
      break;
    default:
      put(static_cast<uint8_t>(v != 0 ? 1 : 0));
      break;
  }
  return b;
}
}  // namespace

std::unique_ptr<CpuKernel> make_pad(Ctx& c) {
  c.arity(1, 1, 1);
  c.v.require_attr("pads");
  const std::vector<int64_t> pads = c.v.get_ints("pads");
  const auto& in = c.in[0].dims;
  const size_t r = in.size();
  if (pads.size() != 2 * r) {
    c.fail("attribute 'pads' has " + std::to_string(pads.size()) + " values, expected " +
           std::to_string(2 * r));
  }
  const std::string mode = c.v.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    c.fail("attribute 'mode' must be \"constant\", \"reflect\" or \"edge\", got \"" + mode + "\"");
  }
  std::vector<int64_t> want(r);
  std::vector<std::vector<int64_t>> src(r);
  for (size_t d = 0; d < r; ++d) {
    const int64_t lo = pads[d], n = in[d];
    if (__builtin_add_overflow(n, lo, &want[d]) ||
        __builtin_add_overflow(want[d], pads[d + r], &want[d]))
      c.fail("attribute 'pads' " + dims_str(pads) + " makes a dimension overflow int64");
    if (want[d] < 0) c.fail("attribute 'pads' " + dims_str(pads) + " makes a negative dimension");
    const bool padded = lo > 0 || pads[d + r] > 0;
    if (mode == "reflect" && padded && (lo >= n || pads[d + r] >= n))
      c.fail("reflect pads " + dims_str(pads) + " must be smaller than the dims " + dims_str(in));
    if (mode == "edge" && padded && n == 0) c.fail("edge padding of an empty dimension");
  }
  // An empty output needs no index tables: a huge dimension next to a zero
  // one must not cost its size in memory and time.
  const bool empty = std::find(want.begin(), want.end(), 0) != want.end();
  for (size_t d = 0; d < r && !empty; ++d) {
    const int64_t lo = pads[d], n = in[d];
    for (int64_t o = 0; o < want[d]; ++o) {
      int64_t k = o - lo;  // negative pads crop
      if (k < 0 || k >= n) {
        if (mode == "constant") {
          k = -1;
        } else if (mode == "edge") {
          k = std::clamp<int64_t>(k, 0, n - 1);
        } else {  // reflect, without repeating the edge
          k = k < 0 ? -k : 2 * (n - 1) - k;
        }
      }
      src[d].push_back(k);
    }
  }
  c.dims(c.out[0], "output", want);
  return std::make_unique<PadKernel>(want, std::move(src), dense_strides(in),
                                     encode_scalar(c.dtype, c.v.get_float("value", 0.0)),
                                     c.out[0].numel);
}

// BitCast: the bytes as they are (the op set checked the widths match).
std::unique_ptr<CpuKernel> make_bit_cast(Ctx& c) {
  c.arity(1, 1, 1);
  c.dims(c.out[0], "output", c.in[0].dims);
  return std::make_unique<CopyKernel>(static_cast<size_t>(c.in[0].numel) *
                                      dtype_size(c.in[0].dtype));
}

std::unique_ptr<CpuKernel> make_cast(Ctx& c) {
  c.arity(1, 1, 1);
  c.v.require_attr("to");
  const int64_t to = c.v.get_int("to", 0);
  auto known = [](int64_t dt) {
    return dt > INT32_MIN && dt < INT32_MAX && dtype_size(static_cast<ampx_dtype>(dt)) != 0;
  };
  if (!known(to)) c.fail("attribute 'to' = " + std::to_string(to) + " is not a valid dtype");
  if (!known(c.in[0].dtype)) c.fail("input 0 has an invalid dtype");
  if (c.out[0].dtype != static_cast<ampx_dtype>(to)) {
    c.fail(std::string("output is ") + dtype_name(c.out[0].dtype) + " but attribute 'to' says " +
           dtype_name(static_cast<ampx_dtype>(to)));
  }
  c.dims(c.out[0], "output", c.in[0].dims);
  return std::make_unique<CastKernel>(c.in[0].dtype, static_cast<ampx_dtype>(to), c.in[0].numel);
}

}  // namespace ampx::reference::detail
