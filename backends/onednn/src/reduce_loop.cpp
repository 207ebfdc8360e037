#include "reduce_loop.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "ampx/half.hpp"

#ifdef AMPX_ONEDNN_HAVE_OPENMP
#include <omp.h>
#endif

#include "dnnl_util.hpp"

namespace ampx::onednn {
namespace {

namespace ps = plugin_support;

// Outputs one task of the inner-kept loop computes side by side (2 KiB of
// f32 accumulators: they stay in L1 while the reduced rows stream past).
constexpr int64_t kBlock = 512;

// The reference kernels' sum_n: 8 independent partial sums, combined in a
// fixed tree, then the tail in order. Vectorises without -ffast-math.
float sum8(const float* x, int64_t n) {
  float p[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
#pragma omp simd
    for (int l = 0; l < 8; ++l) p[l] += x[i + l];
  }
  float s = ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]));
  for (; i < n; ++i) s += x[i];
  return s;
}

// n elements of a 16-bit tensor widened to f32 (exact).
void widen(const void* x, ampx_dtype dt, int64_t at, int64_t n, float* to) {
  const auto* h = static_cast<const uint16_t*>(x) + at;
  if (dt == AMPX_DTYPE_BF16) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) to[i] = bf16_bits_to_float(h[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) to[i] = f16_bits_to_float(h[i]);
  }
}

void store(void* y, ampx_dtype dt, int64_t at, const float* v, int64_t n) {
  switch (dt) {
    case AMPX_DTYPE_F32:
      std::copy(v, v + n, static_cast<float*>(y) + at);
      return;
    case AMPX_DTYPE_BF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(y)[at + i] = float_to_bf16_bits(v[i]);
      return;
    default:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(y)[at + i] = float_to_f16_bits(v[i]);
      return;
  }
}

// Odometer over `runs` in row-major order: the input offset of each index.
class Odometer {
 public:
  Odometer(const AxisRun* runs, size_t count) : runs_(runs), idx_(count, 0) {}
  int64_t offset() const noexcept { return off_; }
  void next() noexcept {
    for (size_t d = idx_.size(); d-- > 0;) {
      off_ += runs_[d].stride;
      if (++idx_[d] < runs_[d].n) return;
      off_ -= runs_[d].stride * runs_[d].n;
      idx_[d] = 0;
    }
  }
  void reset() noexcept {
    std::fill(idx_.begin(), idx_.end(), 0);
    off_ = 0;
  }

 private:
  const AxisRun* runs_;
  std::vector<int64_t> idx_;
  int64_t off_ = 0;
};

// The input offset of index k over `runs` (row-major).
int64_t offset_of(int64_t k, const AxisRun* runs, size_t count) {
  int64_t off = 0;
  for (size_t d = count; d-- > 0;) {
    off += (k % runs[d].n) * runs[d].stride;
    k /= runs[d].n;
  }
  return off;
}

// Appends an axis of length n and input stride s to `runs`, merged into the
// previous run where the two are adjacent in memory (as the reference
// kernels merge them, so that the order of additions is theirs).
void add_axis(std::vector<AxisRun>& runs, int64_t n, int64_t s) {
  if (n == 1) return;
  if (!runs.empty() && runs.back().stride == s * n) {
    runs.back().n *= n;
    runs.back().stride = s;
  } else {
    runs.push_back({n, s});
  }
}

// Calls fn(begin, end) over contiguous chunks of [0, tasks), one per thread
// of the launch's team (at most `tasks`). A task's result does not depend
// on the chunk it falls in.
template <class Fn>
void for_chunks(int64_t tasks, int threads, Fn&& fn) {
#ifdef AMPX_ONEDNN_HAVE_OPENMP
  const int64_t t = std::min<int64_t>({tasks, threads, omp_get_max_threads()});
  if (t > 1) {
#pragma omp parallel for num_threads(static_cast <int>(t)) schedule(static)
    for (int64_t i = 0; i < t; ++i) fn(tasks * i / t, tasks * (i + 1) / t);
    return;
  }
#endif
  (void)threads;
  fn(int64_t{0}, tasks);
}

int64_t product(const std::vector<AxisRun>& runs) {
  int64_t p = 1;
  for (const AxisRun& r : runs) p *= r.n;
  return p;
}

}  // namespace

bool reduce_loop_fits(const ps::NodeView& v) {
  const std::string_view op = v.op_type();
  if (op != "ReduceSum" && op != "ReduceMean") return false;
  if (v.num_inputs() != 1 || v.num_outputs() != 1) return false;
  const ampx_dtype dt = v.input(0).dtype;
  if (dt != AMPX_DTYPE_F32 && dt != AMPX_DTYPE_F16 && dt != AMPX_DTYPE_BF16) return false;
  if (v.output(0).dtype != dt) return false;
  const int64_t n = ps::element_count(v.input(0));
  return n > 0 && ps::element_count(v.output(0)) < n;
}

ReduceLoopKernel::ReduceLoopKernel(std::shared_ptr<Context> ctx, const ps::NodeView& v, int threads)
    : ctx_(std::move(ctx)),
      threads_(threads),
      dt_(v.input(0).dtype),
      mean_(v.op_type() == "ReduceMean") {
  const ampx_tensor_desc& x = v.input(0);
  const dims_t d = dims_of(x);
  const dims_t s = dense_strides(d);
  const std::vector<int64_t> axes = v.get_ints("axes");
  std::vector<bool> reduced(d.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(normalize_axis(a, x.rank))] = true;
  for (size_t i = 0; i < d.size(); ++i) add_axis(reduced[i] ? reduced_ : kept_, d[i], s[i]);
  outputs_ = product(kept_);
  count_ = product(reduced_);
  inner_reduced_ = !reduced_.empty() && reduced_.back().stride == 1;
}

void ReduceLoopKernel::run(std::span<const void* const> in, std::span<void* const> out) {
  ctx_->count_kernel_run(false);
  ctx_->launch(
      [&] {
        if (inner_reduced_) {
          run_inner_reduced(in[0], out[0]);
        } else {
          run_inner_kept(in[0], out[0]);
        }
      },
      threads_);
}

// Each output: its rows of the innermost reduced run (contiguous), summed
// by sum8(), added in row-major order over the outer reduced runs.
void ReduceLoopKernel::run_inner_reduced(const void* x, void* y) const {
  const int64_t len = reduced_.back().n;
  const size_t outer = reduced_.size() - 1;
  for_chunks(outputs_, threads_, [&](int64_t o0, int64_t o1) {
    Odometer rows(reduced_.data(), outer);
    const int64_t row_count = count_ / len;
    std::vector<float> wide(dt_ == AMPX_DTYPE_F32 ? 0 : static_cast<size_t>(len));
    std::vector<float> result(static_cast<size_t>(o1 - o0));
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t base = offset_of(o, kept_.data(), kept_.size());
      rows.reset();
      float total = 0.0f;
      for (int64_t r = 0; r < row_count; ++r, rows.next()) {
        const int64_t at = base + rows.offset();
        if (dt_ == AMPX_DTYPE_F32) {
          total += sum8(static_cast<const float*>(x) + at, len);
        } else {
          widen(x, dt_, at, len, wide.data());
          total += sum8(wide.data(), len);
        }
      }
      result[static_cast<size_t>(o - o0)] = mean_ ? total / static_cast<float>(count_) : total;
    }
    store(y, dt_, o0, result.data(), o1 - o0);
  });
}

// Blocks of up to kBlock adjacent outputs of one row of the innermost kept
// run (contiguous in input and output): every reduced row added to them in
// row-major order, one output per lane.
void ReduceLoopKernel::run_inner_kept(const void* x, void* y) const {
  const int64_t len = kept_.back().n;
  const size_t outer = kept_.size() - 1;
  const int64_t blocks = (len + kBlock - 1) / kBlock;
  const int64_t tasks = outputs_ / len * blocks;
  for_chunks(tasks, threads_, [&](int64_t t0, int64_t t1) {
    Odometer rows(reduced_.data(), reduced_.size());
    std::array<float, kBlock> acc;
    std::array<float, kBlock> wide;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t q = t / blocks, j0 = (t % blocks) * kBlock;
      const int64_t n = std::min(kBlock, len - j0);
      const int64_t base = offset_of(q, kept_.data(), outer) + j0;
      std::fill_n(acc.data(), n, 0.0f);
      rows.reset();
      for (int64_t r = 0; r < count_; ++r, rows.next()) {
        const int64_t at = base + rows.offset();
        const float* src = static_cast<const float*>(x) + at;
        if (dt_ != AMPX_DTYPE_F32) {
          widen(x, dt_, at, n, wide.data());
          src = wide.data();
        }
        float* a = acc.data();
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) a[j] += src[j];
      }
      if (mean_) {
        const float c = static_cast<float>(count_);
        for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] /= c;
      }
      store(y, dt_, q * len + j0, acc.data(), n);
    }
  });
}

}  // namespace ampx::onednn
