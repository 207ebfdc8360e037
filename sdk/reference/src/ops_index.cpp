// Indexing, sorting and running sums (docs/OPS.md): GatherElements,
// GatherND and ScatterND move bytes of any dtype; TopK and CumSum compute in
// f32 / f64 (16-bit arrives widened) or i64 / i32. Every index is checked
// (negative ones count from the end, as ONNX) before anything is written,
// and a bad one is an error naming the node, the index and its position.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <type_traits>

#include "common.hpp"

namespace ampx::reference::detail {
namespace {

using plugin_support::dtype_name;
using plugin_support::dtype_size;

// CumSum's accumulator: double for floats, the unsigned type for integers
// (wrapping, no signed overflow).
template <class T, bool = std::is_floating_point_v<T>>
struct Accumulator {
  using type = double;
};
template <class T>
struct Accumulator<T, false> {
  using type = std::make_unsigned_t<T>;
};

// ----------------------------------------------------- GatherElements

// out[i0, .., ia, ..] = data[i0, .., indices[i0, .., ia, ..], ..]
class GatherElementsKernel final : public CpuKernel {
 public:
  GatherElementsKernel(std::string where, std::vector<int64_t> idx_dims,
                       std::vector<int64_t> data_strides, size_t axis, int64_t axis_len,
                       size_t esize, bool idx64)
      : where_(std::move(where)),
        idx_dims_(std::move(idx_dims)),
        ds_(std::move(data_strides)),
        axis_(axis),
        len_(axis_len),
        es_(esize),
        idx64_(idx64) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* data = static_cast<const unsigned char*>(in[0]);
    auto* y = static_cast<unsigned char*>(out[0]);
    const int64_t n = product(idx_dims_);
    offsets_.resize(static_cast<size_t>(n));
    std::vector<int64_t> pos(idx_dims_.size(), 0);
    for (int64_t j = 0; j < n; ++j) {
      int64_t off = 0;
      for (size_t d = 0; d < pos.size(); ++d)
        off += (d == axis_ ? checked_index(where_, in[1], idx64_, j, len_) : pos[d]) * ds_[d];
      offsets_[static_cast<size_t>(j)] = off;
      for (size_t d = pos.size(); d-- > 0;) {  // odometer over the indices' dims
        if (++pos[d] < idx_dims_[d]) break;
        pos[d] = 0;
      }
    }
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(y + static_cast<size_t>(j) * es_,
                  data + static_cast<size_t>(offsets_[static_cast<size_t>(j)]) * es_, es_);
  }

 private:
  std::string where_;
  std::vector<int64_t> idx_dims_, ds_;
  size_t axis_;
  int64_t len_;
  size_t es_;
  bool idx64_;
  std::vector<int64_t> offsets_;
};

// ------------------------------------------------ GatherND, ScatterND

// What GatherND and ScatterND share: `batch` leading dims common to data
// and indices, then per batch `tuples` index tuples of `depth` coordinates,
// each naming a slice of `slice` elements of data.
struct NdGeometry {
  std::string where;
  int64_t batch_count = 1;                       // product of the batch dims
  int64_t batch_stride = 0;                      // elements of data per batch entry
  int64_t tuples = 0;                            // per batch entry
  int64_t slice = 0;                             // elements per slice
  int64_t data_count = 0;                        // elements of data
  std::vector<int64_t> coord_len, coord_stride;  // per coordinate: dim and stride
  size_t esize = 0;
  bool idx64 = true;

  // Element offset in data of tuple t (counted over all batches), checked.
  int64_t offset(const void* indices, int64_t t) const {
    const auto depth = static_cast<int64_t>(coord_len.size());
    int64_t off = (t / tuples) * batch_stride;
    for (int64_t k = 0; k < depth; ++k) {
      const auto kk = static_cast<size_t>(k);
      off += checked_index(where, indices, idx64, t * depth + k, coord_len[kk]) * coord_stride[kk];
    }
    return off;
  }
};

NdGeometry nd_geometry(const Ctx& c, int64_t batch) {
  const auto& d = c.in[0].dims;
  const auto& q = c.in[1].dims;
  const auto b = static_cast<size_t>(batch);
  const auto depth = static_cast<size_t>(q.back());
  NdGeometry g;
  g.where = c.v.where();
  g.batch_count = product(d, 0, b);
  g.batch_stride = product(d, b);
  g.tuples = product(q, b, q.size() - 1);
  g.slice = product(d, b + depth);
  g.data_count = product(d);
  const std::vector<int64_t> strides = dense_strides(d);
  for (size_t k = 0; k < depth; ++k) {
    g.coord_len.push_back(d[b + k]);
    g.coord_stride.push_back(strides[b + k]);
  }
  g.esize = dtype_size(c.dtype);
  g.idx64 = c.in[1].dtype == AMPX_DTYPE_I64;
  return g;
}

class GatherNdKernel final : public CpuKernel {
 public:
  explicit GatherNdKernel(NdGeometry g) : g_(std::move(g)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const int64_t n = g_.batch_count * g_.tuples;
    offsets_.resize(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) offsets_[static_cast<size_t>(t)] = g_.offset(in[1], t);
    const auto* data = static_cast<const unsigned char*>(in[0]);
    auto* y = static_cast<unsigned char*>(out[0]);
    const size_t bytes = static_cast<size_t>(g_.slice) * g_.esize;
    for (int64_t t = 0; t < n; ++t)
      if (bytes)
        std::memcpy(y + static_cast<size_t>(t) * bytes,
                    data + static_cast<size_t>(offsets_[static_cast<size_t>(t)]) * g_.esize, bytes);
  }

 private:
  NdGeometry g_;
  std::vector<int64_t> offsets_;
};

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

template <class T>
void reduce_into(T* dst, const T* src, int64_t n, Reduction r) {
  for (int64_t i = 0; i < n; ++i) {
    switch (r) {
      case Reduction::kAdd:
        dst[i] = static_cast<T>(dst[i] + src[i]);
        break;
      case Reduction::kMul:
        dst[i] = static_cast<T>(dst[i] * src[i]);
        break;
      case Reduction::kMax:
        dst[i] = std::max(dst[i], src[i]);
        break;
      case Reduction::kMin:
        dst[i] = std::min(dst[i], src[i]);
        break;
      case Reduction::kNone:
        dst[i] = src[i];
        break;
    }
  }
}

// out = data, then each update slice written (or reduced) at its tuple, in
// the order of the tuples: with reduction none a repeated tuple's last
// update wins (ONNX leaves that undefined; ONNX Runtime does the same).
class ScatterNdKernel final : public CpuKernel {
 public:
  ScatterNdKernel(NdGeometry g, Reduction r, ampx_dtype dt) : g_(std::move(g)), r_(r), dt_(dt) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const int64_t n = g_.tuples;  // batch_count is 1: ScatterND has no batch dims
    offsets_.resize(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) offsets_[static_cast<size_t>(t)] = g_.offset(in[1], t);
    auto* y = static_cast<unsigned char*>(out[0]);
    const auto* upd = static_cast<const unsigned char*>(in[2]);
    const size_t total = static_cast<size_t>(g_.data_count) * g_.esize;
    if (y != in[0] && total) std::memcpy(y, in[0], total);
    const size_t bytes = static_cast<size_t>(g_.slice) * g_.esize;
    for (int64_t t = 0; t < n; ++t) {
      unsigned char* dst = y + static_cast<size_t>(offsets_[static_cast<size_t>(t)]) * g_.esize;
      const unsigned char* src = upd + static_cast<size_t>(t) * bytes;
      if (r_ == Reduction::kNone) {
        if (bytes) std::memcpy(dst, src, bytes);
        continue;
      }
      switch (dt_) {
        case AMPX_DTYPE_F32:
          reduce_into(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src), g_.slice,
                      r_);
          break;
        case AMPX_DTYPE_F64:
          reduce_into(reinterpret_cast<double*>(dst), reinterpret_cast<const double*>(src),
                      g_.slice, r_);
          break;
        case AMPX_DTYPE_I64:
          reduce_into(reinterpret_cast<int64_t*>(dst), reinterpret_cast<const int64_t*>(src),
                      g_.slice, r_);
          break;
        default:  // I32 (the factory admits no other dtype with a reduction)
          reduce_into(reinterpret_cast<int32_t*>(dst), reinterpret_cast<const int32_t*>(src),
                      g_.slice, r_);
          break;
      }
    }
  }

 private:
  NdGeometry g_;
  Reduction r_;
  ampx_dtype dt_;
  std::vector<int64_t> offsets_;
};

// ---------------------------------------------------------------- TopK

// The k largest (or smallest) along the axis, sorted; equal values keep
// the lower index first (ONNX Runtime's order), and NaN counts as larger
// than every number (NumPy's sort order).
template <class T>
class TopKKernel final : public CpuKernel {
 public:
  TopKKernel(int64_t outer, int64_t len, int64_t inner, int64_t k, bool largest)
      : outer_(outer), len_(len), inner_(inner), k_(k), largest_(largest) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* values = static_cast<T*>(out[0]);
    auto* indices = static_cast<int64_t*>(out[1]);
    order_.resize(static_cast<size_t>(len_));
    auto greater = [](T a, T b) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
      }
      return a > b;
    };
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const T* row = x + o * len_ * inner_ + i;
        std::iota(order_.begin(), order_.end(), int64_t{0});
        auto before = [&](int64_t a, int64_t b) {
          const T va = row[a * inner_], vb = row[b * inner_];
          const bool a_first = largest_ ? greater(va, vb) : greater(vb, va);
          const bool b_first = largest_ ? greater(vb, va) : greater(va, vb);
          return a_first || (!b_first && a < b);
        };
        std::partial_sort(order_.begin(), order_.begin() + k_, order_.end(), before);
        for (int64_t j = 0; j < k_; ++j) {
          const int64_t at = (o * k_ + j) * inner_ + i;
          indices[at] = order_[static_cast<size_t>(j)];
          values[at] = row[order_[static_cast<size_t>(j)] * inner_];
        }
      }
    }
  }

 private:
  int64_t outer_, len_, inner_, k_;
  bool largest_;
  std::vector<int64_t> order_;
};

// -------------------------------------------------------------- CumSum

// CumSum and CumProd. Floats accumulate in double (one rounding per
// output); integers wrap.
enum class Running { kSum, kProduct };

template <class T>
class CumSumKernel final : public CpuKernel {
 public:
  CumSumKernel(int64_t outer, int64_t len, int64_t inner, bool exclusive, bool reverse, Running op)
      : outer_(outer),
        len_(len),
        inner_(inner),
        exclusive_(exclusive),
        reverse_(reverse),
        product_(op == Running::kProduct) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    using Acc = typename Accumulator<T>::type;
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const int64_t base = o * len_ * inner_ + i;
        Acc acc = product_ ? 1 : 0;
        for (int64_t s = 0; s < len_; ++s) {
          const int64_t j = reverse_ ? len_ - 1 - s : s;
          const int64_t at = base + j * inner_;
          const Acc v = static_cast<Acc>(x[at]);
          if (exclusive_) y[at] = static_cast<T>(acc);
          acc = product_ ? static_cast<Acc>(acc * v) : static_cast<Acc>(acc + v);
          if (!exclusive_) y[at] = static_cast<T>(acc);
        }
      }
    }
  }

 private:
  int64_t outer_, len_, inner_;
  bool exclusive_, reverse_, product_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_gather_elements(Ctx& c) {
  c.arity(2, 2, 1);
  const auto& d = c.in[0].dims;
  const auto r = static_cast<int64_t>(d.size());
  if (r == 0) c.fail("data is a scalar; GatherElements needs rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", 0), r, "axis"));
  c.dims(c.out[0], "output", c.in[1].dims);
  if (d[axis] == 0 && c.in[1].numel > 0) c.fail("gathers from an empty axis");
  return std::make_unique<GatherElementsKernel>(c.v.where(), c.in[1].dims, dense_strides(d), axis,
                                                d[axis], dtype_size(c.dtype),
                                                c.in[1].dtype == AMPX_DTYPE_I64);
}

std::unique_ptr<CpuKernel> make_gather_nd(Ctx& c) {
  c.arity(2, 2, 1);
  return std::make_unique<GatherNdKernel>(nd_geometry(c, c.v.get_int("batch_dims", 0)));
}

std::unique_ptr<CpuKernel> make_scatter_nd(Ctx& c) {
  c.arity(3, 3, 1);
  const std::string name = c.v.get_string("reduction", "none");
  Reduction r = Reduction::kNone;
  if (name == "add") r = Reduction::kAdd;
  if (name == "mul") r = Reduction::kMul;
  if (name == "max") r = Reduction::kMax;
  if (name == "min") r = Reduction::kMin;
  const bool reducible = c.dtype == AMPX_DTYPE_F32 || c.dtype == AMPX_DTYPE_F64 ||
                         c.dtype == AMPX_DTYPE_I64 || c.dtype == AMPX_DTYPE_I32;
  if (r != Reduction::kNone && !reducible)
    throw UnsupportedNode(c.v.where() + ": reduction '" + name + "' on " + dtype_name(c.dtype) +
                          " (f32, f64, i64 and i32 only)");
  return std::make_unique<ScatterNdKernel>(nd_geometry(c, 0), r, c.dtype);
}

std::unique_ptr<CpuKernel> make_top_k(Ctx& c) {
  c.arity(1, 1, 2);
  const auto& d = c.in[0].dims;
  const auto axis =
      static_cast<size_t>(c.axis(c.v.get_int("axis", -1), static_cast<int64_t>(d.size()), "axis"));
  const int64_t k = c.v.get_int("k", 0);
  return numeric<TopKKernel>(c, product(d, 0, axis), d[axis], product(d, axis + 1), k,
                             c.v.get_int("largest", 1) != 0);
}

std::unique_ptr<CpuKernel> make_cum_sum(Ctx& c) {
  c.arity(1, 1, 1);
  const auto& d = c.in[0].dims;
  const auto axis =
      static_cast<size_t>(c.axis(c.v.get_int("axis", 0), static_cast<int64_t>(d.size()), "axis"));
  return numeric<CumSumKernel>(
      c, product(d, 0, axis), d[axis], product(d, axis + 1), c.v.get_int("exclusive", 0) != 0,
      c.v.get_int("reverse", 0) != 0,
      c.v.op_type() == std::string_view("CumProd") ? Running::kProduct : Running::kSum);
}

}  // namespace ampx::reference::detail
