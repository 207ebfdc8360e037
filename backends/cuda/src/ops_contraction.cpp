// MatMul and Gemm through cuBLASLt (lt_matmul.hpp).
#include <optional>

#include "allocator.hpp"
#include "cuda_error.hpp"
#include "lt_matmul.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

namespace ps = ampx::plugin_support;

int64_t product(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

// ------------------------------------------------------------------ MatMul

class MatMulOp final : public CudaOp {
 public:
  // `offsets`: per launch GEMM, the element offsets into A, B (Y advances by
  // M*N); empty when one (possibly batched) Lt call does it all.
  MatMulOp(DeviceContext& dev, ampx_dtype dt, const LtMatmul::Shape& s,
           std::vector<std::pair<int64_t, int64_t>> offsets)
      : elem_(ps::dtype_size(dt)),
        mm_(dev, dt, s),
        offsets_(std::move(offsets)),
        y_step_(s.M * s.N) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    if (offsets_.empty()) {
      mm_.run(in[0], in[1], nullptr, out[0], nullptr, 1.0f, 0.0f);
      return;
    }
    const auto* a = static_cast<const unsigned char*>(in[0]);
    const auto* b = static_cast<const unsigned char*>(in[1]);
    auto* y = static_cast<unsigned char*>(out[0]);
    for (size_t i = 0; i < offsets_.size(); ++i) {
      mm_.run(a + offsets_[i].first * static_cast<int64_t>(elem_),
              b + offsets_[i].second * static_cast<int64_t>(elem_), nullptr,
              y + static_cast<int64_t>(i) * y_step_ * static_cast<int64_t>(elem_), nullptr, 1.0f,
              0.0f);
    }
  }

 private:
  size_t elem_;
  LtMatmul mm_;
  std::vector<std::pair<int64_t, int64_t>> offsets_;
  int64_t y_step_;
};

// -------------------------------------------------------------------- Gemm

// How Gemm's C reaches cuBLASLt.
enum class CMode {
  kNone,         // no C, or beta == 0
  kBias,         // C is a row [N] / [1,N] and beta == 1: the bias epilogue
  kFull,         // C is [M,N]: passed as Lt's C with beta
  kMaterialise,  // anything else broadcast into an [M,N] scratch, then as kFull
};

class GemmOp final : public CudaOp {
 public:
  GemmOp(DeviceContext& dev, ampx_dtype dt, LtMatmul::Shape s, CMode mode,
         std::vector<int64_t> c_dims, float alpha, float beta)
      : dev_(dev),
        dt_(dt),
        s_(s),
        mode_(mode),
        c_dims_(std::move(c_dims)),
        alpha_(alpha),
        beta_(beta) {
    s_.bias = mode_ == CMode::kBias;
    mm_.emplace(dev_, dt_, s_);
  }

  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    const void* a = in[0];
    const void* b = in[1];
    void* y = out[0];
    const float beta = mode_ == CMode::kNone ? 0.0f : beta_;
    if (mode_ == CMode::kBias) {
      try {
        run_bias(a, b, in[2], y);
        return;
      } catch (const ps::StatusError& e) {
        if (e.code() != AMPX_STATUS_UNSUPPORTED) throw;
        // No bias-epilogue algorithm for this shape here: broadcast instead.
        mode_ = CMode::kMaterialise;
        s_.bias = false;
        mm_.emplace(dev_, dt_, s_);
      }
    }
    if (mode_ == CMode::kMaterialise) {
      DeviceMemory full(dev_.allocator(), static_cast<uint64_t>(s_.M * s_.N) * elem());
      broadcast_c(in[2], full.get());
      mm_->run(a, b, full.get(), y, nullptr, alpha_, beta);
      return;  // `full` returns to the cache; the stream orders its reuse
    }
    mm_->run(a, b, mode_ == CMode::kFull ? in[2] : nullptr, y, nullptr, alpha_, beta);
  }

 private:
  size_t elem() const { return ps::dtype_size(dt_); }

  void run_bias(const void* a, const void* b, const void* bias, void* y) {
    // The epilogue reads the bias vectorised: give it 16-byte alignment.
    if (reinterpret_cast<uintptr_t>(bias) % 16 != 0) {
      DeviceMemory aligned(dev_.allocator(), static_cast<uint64_t>(s_.N) * elem());
      check_cuda(cudaMemcpyAsync(aligned.get(), bias, static_cast<size_t>(s_.N) * elem(),
                                 cudaMemcpyDeviceToDevice, dev_.stream()),
                 "cudaMemcpyAsync");
      mm_->run(a, b, nullptr, y, aligned.get(), alpha_, 0.0f);
      return;
    }
    mm_->run(a, b, nullptr, y, bias, alpha_, 0.0f);
  }

  // C (rank <= 2, unidirectionally broadcastable) -> dense [M, N].
  void broadcast_c(const void* c, void* full) {
    int64_t cm = 1, cn = 1;
    if (c_dims_.size() == 2) {
      cm = c_dims_[0];
      cn = c_dims_[1];
    } else if (c_dims_.size() == 1) {
      cn = c_dims_[0];
    }
    kern::StridedCopy p;
    p.rank = 2;
    p.dims[0] = s_.M;
    p.dims[1] = s_.N;
    p.src_strides[0] = cm == 1 ? 0 : cn;
    p.src_strides[1] = cn == 1 ? 0 : 1;
    p.dst_strides[0] = s_.N;
    p.dst_strides[1] = 1;
    check_kernel(kern::strided_copy(elem(), p, s_.M * s_.N, c, full, dev_.stream()),
                 "strided_copy");
  }

  DeviceContext& dev_;
  ampx_dtype dt_;
  LtMatmul::Shape s_;
  CMode mode_;
  std::vector<int64_t> c_dims_;
  float alpha_, beta_;
  std::optional<LtMatmul> mm_;
};

}  // namespace

std::unique_ptr<CudaOp> make_matmul(OpContext& c) {
  const auto& a = c.in[0].dims;
  const auto& b = c.in[1].dims;
  const auto& y = c.out[0].dims;
  LtMatmul::Shape s;
  s.M = a[a.size() - 2];
  s.K = a[a.size() - 1];
  s.N = b[b.size() - 1];
  // Batch dims, left-padded with 1s to the output's batch rank.
  const size_t br = y.size() - 2;
  auto batch_dims = [&](const std::vector<int64_t>& d) {
    std::vector<int64_t> r(br, 1);
    for (size_t i = 0; i + 2 < d.size(); ++i) r[br - (d.size() - 2) + i] = d[i];
    return r;
  };
  const std::vector<int64_t> ba = batch_dims(a), bb = batch_dims(b), by(y.begin(), y.end() - 2);
  const int64_t batch = product(by);
  std::vector<std::pair<int64_t, int64_t>> offsets;
  if (product(bb) == 1) {
    // One B for every batch: fold A's batch into its rows, one plain GEMM.
    s.M *= batch;
  } else if (ba == bb) {
    s.batch = batch;
    s.stride_a = s.M * s.K;
    s.stride_b = s.K * s.N;
    s.stride_y = s.M * s.N;
  } else {
    // General broadcast: one GEMM per output batch, operands found through
    // broadcast strides (in matrices).
    std::vector<int64_t> sa(br), sb(br);
    int64_t ka = 1, kb = 1;
    for (size_t i = br; i-- > 0;) {
      sa[i] = ba[i] == 1 ? 0 : ka;
      sb[i] = bb[i] == 1 ? 0 : kb;
      ka *= ba[i];
      kb *= bb[i];
    }
    for (int64_t i = 0; i < batch; ++i) {
      int64_t rem = i, oa = 0, ob = 0;
      for (size_t d = br; d-- > 0;) {
        const int64_t idx = rem % by[d];
        rem /= by[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      offsets.emplace_back(oa * s.M * s.K, ob * s.K * s.N);
    }
  }
  return std::make_unique<MatMulOp>(c.dev, c.out[0].dtype, s, std::move(offsets));
}

std::unique_ptr<CudaOp> make_gemm(OpContext& c) {
  LtMatmul::Shape s;
  s.trans_a = c.v.get_int("transA", 0) != 0;
  s.trans_b = c.v.get_int("transB", 0) != 0;
  const auto& a = c.in[0].dims;
  const auto& b = c.in[1].dims;
  s.M = s.trans_a ? a[1] : a[0];
  s.K = s.trans_a ? a[0] : a[1];
  s.N = s.trans_b ? b[0] : b[1];
  const auto alpha = static_cast<float>(c.v.get_float("alpha", 1.0));
  const auto beta = static_cast<float>(c.v.get_float("beta", 1.0));
  CMode mode = CMode::kNone;
  std::vector<int64_t> c_dims;
  if (c.in.size() == 3 && beta != 0.0f) {
    c_dims = c.in[2].dims;
    const int64_t cm = c_dims.size() == 2 ? c_dims[0] : 1;
    const int64_t cn = c_dims.empty() ? 1 : c_dims.back();
    if (cm == 1 && cn == s.N && beta == 1.0f) {
      mode = CMode::kBias;
    } else if (cm == s.M && cn == s.N) {
      mode = CMode::kFull;
    } else {
      mode = CMode::kMaterialise;
    }
  }
  return std::make_unique<GemmOp>(c.dev, c.out[0].dtype, s, mode, std::move(c_dims), alpha, beta);
}

}  // namespace ampx::cuda
