// Data movement (Reshape, Flatten, Dropout, Transpose, Concat, Slice,
// Gather: bit copies in any dtype) and Cast.
#include <algorithm>
#include <climits>

#include "allocator.hpp"
#include "ampx/opset/shape_rules.hpp"
#include "cuda_error.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

namespace ps = ampx::plugin_support;

size_t norm_axis(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// Same bytes, new shape (Reshape, Flatten, Dropout, Cast to the same dtype).
class CopyOp final : public CudaOp {
 public:
  CopyOp(DeviceContext& dev, uint64_t bytes) : dev_(dev), bytes_(bytes) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    if (bytes_)
      check_cuda(cudaMemcpyAsync(out[0], in[0], bytes_, cudaMemcpyDeviceToDevice, dev_.stream()),
                 "cudaMemcpyAsync");
  }

 private:
  DeviceContext& dev_;
  uint64_t bytes_;
};

// Copies each input through a strided view into the output.
class StridedOp final : public CudaOp {
 public:
  struct Piece {
    kern::StridedCopy copy;
    int64_t n = 0;
    int64_t src_offset = 0, dst_offset = 0;  // elements
  };
  StridedOp(DeviceContext& dev, size_t elem, std::vector<Piece> pieces)
      : dev_(dev), elem_(elem), pieces_(std::move(pieces)) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    for (size_t i = 0; i < pieces_.size(); ++i) {
      const Piece& p = pieces_[i];
      const auto* src = static_cast<const unsigned char*>(in[i]) + p.src_offset * elem_;
      auto* dst = static_cast<unsigned char*>(out[0]) + p.dst_offset * elem_;
      check_kernel(kern::strided_copy(elem_, p.copy, p.n, src, dst, dev_.stream()), "strided_copy");
    }
  }

 private:
  DeviceContext& dev_;
  size_t elem_;
  std::vector<Piece> pieces_;
};

class GatherOp final : public CudaOp {
 public:
  GatherOp(DeviceContext& dev, size_t elem, kern::GatherParams p) : dev_(dev), elem_(elem), p_(p) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    // An index out of range is a data error cpu_ref reports; finding out
    // costs one 4-byte copy back and a wait for the stream.
    DeviceMemory flag(dev_.allocator(), sizeof(int));
    check_cuda(cudaMemsetAsync(flag.get(), 0, sizeof(int), dev_.stream()), "cudaMemsetAsync");
    check_kernel(
        kern::gather(elem_, p_, in[0], in[1], out[0], static_cast<int*>(flag.get()), dev_.stream()),
        "gather");
    int bad = 0;
    check_cuda(cudaMemcpyAsync(&bad, flag.get(), sizeof bad, cudaMemcpyDeviceToHost, dev_.stream()),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(dev_.stream()), "cudaStreamSynchronize");
    if (bad) {
      throw std::invalid_argument("an index is out of range for axis length " +
                                  std::to_string(p_.axis_len));
    }
  }

 private:
  DeviceContext& dev_;
  size_t elem_;
  kern::GatherParams p_;
};

class CastOp final : public CudaOp {
 public:
  CastOp(DeviceContext& dev, ampx_dtype from, ampx_dtype to, int64_t n)
      : dev_(dev), from_(from), to_(to), n_(n) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    check_kernel(kern::cast(from_, to_, in[0], out[0], n_, dev_.stream()), "cast");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype from_, to_;
  int64_t n_;
};

StridedOp::Piece piece(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                       const std::vector<int64_t>& dst_strides) {
  StridedOp::Piece p;
  p.copy.rank = static_cast<int32_t>(dims.size());
  p.n = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    p.copy.dims[d] = dims[d];
    p.copy.src_strides[d] = src_strides[d];
    p.copy.dst_strides[d] = dst_strides[d];
    p.n *= dims[d];
  }
  return p;
}

}  // namespace

std::unique_ptr<CudaOp> make_copy(OpContext& c) {
  return std::make_unique<CopyOp>(c.dev, c.out[0].bytes);
}

std::unique_ptr<CudaOp> make_transpose(OpContext& c) {
  const auto& x = c.in[0].dims;
  const size_t r = x.size();
  std::vector<int64_t> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
  perm = c.v.get_ints("perm", perm);
  const std::vector<int64_t> xs = dense_strides(x);
  std::vector<int64_t> src(r);
  for (size_t i = 0; i < r; ++i) src[i] = xs[static_cast<size_t>(perm[i])];
  std::vector<StridedOp::Piece> pieces{piece(c.out[0].dims, src, dense_strides(c.out[0].dims))};
  return std::make_unique<StridedOp>(c.dev, ps::dtype_size(c.out[0].dtype), std::move(pieces));
}

std::unique_ptr<CudaOp> make_concat(OpContext& c) {
  const auto& y = c.out[0].dims;
  const size_t axis = norm_axis(c.v.get_int("axis", 0), y.size());
  const std::vector<int64_t> ys = dense_strides(y);
  std::vector<StridedOp::Piece> pieces;
  int64_t at = 0;  // position along the axis
  for (const TensorInfo& t : c.in) {
    StridedOp::Piece p = piece(t.dims, dense_strides(t.dims), ys);
    p.dst_offset = at * ys[axis];
    at += t.dims[axis];
    pieces.push_back(p);
  }
  return std::make_unique<StridedOp>(c.dev, ps::dtype_size(c.out[0].dtype), std::move(pieces));
}

// The start and stride of every axis from the op set's ONNX normalisation
// (opset::slice_axis: negative values count from the end, then clamp).
std::unique_ptr<CudaOp> make_slice(OpContext& c) {
  const auto& x = c.in[0].dims;
  const auto r = static_cast<int64_t>(x.size());
  const std::vector<int64_t> starts = c.v.get_ints("starts"), ends = c.v.get_ints("ends");
  const size_t n = starts.size();
  std::vector<int64_t> axes(n), steps(n, 1);
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  axes = c.v.get_ints("axes", axes);
  steps = c.v.get_ints("steps", steps);
  const std::vector<int64_t> xs = dense_strides(x);
  std::vector<int64_t> strides = xs;
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<size_t>(axes[i] < 0 ? axes[i] + r : axes[i]);
    const int64_t dim = x[a], step = steps[i];
    const ampx::opset::SliceAxis s = ampx::opset::slice_axis(starts[i], ends[i], step, dim);
    const int64_t len = s.length;
    if (len > 0) offset += s.start * xs[a];
    strides[a] = len > 1 ? step * xs[a] : 0;
  }
  StridedOp::Piece p = piece(c.out[0].dims, strides, dense_strides(c.out[0].dims));
  p.src_offset = offset;
  return std::make_unique<StridedOp>(c.dev, ps::dtype_size(c.out[0].dtype),
                                     std::vector<StridedOp::Piece>{p});
}

std::unique_ptr<CudaOp> make_gather(OpContext& c) {
  const auto& d = c.in[0].dims;
  const size_t axis = norm_axis(c.v.get_int("axis", 0), d.size());
  kern::GatherParams p;
  p.outer = 1;
  for (size_t i = 0; i < axis; ++i) p.outer *= d[i];
  p.axis_len = d[axis];
  p.n_idx = c.in[1].numel;
  p.inner = 1;
  for (size_t i = axis + 1; i < d.size(); ++i) p.inner *= d[i];
  p.idx64 = c.in[1].dtype == AMPX_DTYPE_I64;
  return std::make_unique<GatherOp>(c.dev, ps::dtype_size(c.in[0].dtype), p);
}

std::unique_ptr<CudaOp> make_cast(OpContext& c) {
  const ampx_dtype from = c.in[0].dtype, to = c.out[0].dtype;
  if (from == to) return std::make_unique<CopyOp>(c.dev, c.out[0].bytes);
  return std::make_unique<CastOp>(c.dev, from, to, c.in[0].numel);
}

}  // namespace ampx::cuda
