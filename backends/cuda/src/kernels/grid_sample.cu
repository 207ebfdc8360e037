// GridSample (docs/OPS.md), a port of cpu_ref's loop
// (sdk/reference/src/ops_grid_sample.cpp), one thread per output element.
// Coordinates in double, rounded to f32 where ONNX's reference holds them in
// the element type (16-bit data computes as cpu_ref's widened f32 run), the
// weights and the sum in f32. This file is compiled with -fmad=false
// (CMakeLists.txt): a fused multiply-add in the coordinate arithmetic would
// round differently from the reference and could move a point across a
// pixel boundary (floor, rint).
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

// static_cast<int64_t>(x) as the reference's x86-64 build does it
// (cvttsd2si): NaN and values out of range give INT64_MIN (CUDA's
// conversion saturates instead).
__device__ int64_t trunc_i64(double x) {
  if (x >= -9223372036854775808.0 && x < 9223372036854775808.0) return static_cast<int64_t>(x);
  return INT64_MIN;
}

// a + b wrapping as two's complement (the reference's int64 sums near
// INT64_MIN), without signed-overflow UB.
__device__ int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Reflects x about [lo, hi] until it lies inside (ONNX's _gs_reflect).
__device__ double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t k = trunc_i64(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t k = trunc_i64(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

__device__ double cubic_weight(double x) {
  constexpr double a = -0.75;
  x = fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

struct Axis {
  int64_t first;
  double w[4];
};

// Axis a's first tap and its weights for normalised coordinate v.
__device__ Axis setup_axis(const GridSampleParams& p, int a, float v) {
  const double d = static_cast<double>(p.in[a]);
  const double lo = p.align_corners ? 0.0 : -0.5, hi = p.align_corners ? d - 1 : d - 0.5;
  const double nv = static_cast<double>(v);
  // ONNX's reference holds the coordinate in the element type.
  double x = static_cast<double>(
      static_cast<float>(p.align_corners ? (nv + 1) / 2.0 * (d - 1) : ((nv + 1) * d - 1) / 2.0));
  if (p.mode == 0) x = rint(x);  // half to even, as np.rint
  if (x < lo || x > hi) {
    if (p.padding == 1) x = x < 0.0 ? 0.0 : (d - 1 < x ? d - 1 : x);
    if (p.padding == 2) x = reflect(x, lo, hi);
  }
  x = static_cast<double>(static_cast<float>(x));
  Axis ax{};
  if (p.mode == 0) {
    ax.first = trunc_i64(x);  // truncation, as astype(int32)
    ax.w[0] = 1;
    return ax;
  }
  const double f = floor(x), r = x - f;
  if (p.mode == 1) {
    ax.first = trunc_i64(f);
    ax.w[0] = 1 - r;
    ax.w[1] = r;
  } else {
    ax.first = wrap_add(trunc_i64(f), -1);
    ax.w[0] = cubic_weight(r + 1);
    ax.w[1] = cubic_weight(r);
    ax.w[2] = cubic_weight(1 - r);
    ax.w[3] = cubic_weight(2 - r);
  }
  return ax;
}

// The input index a tap at i of axis a reads; `zero` set for zeros padding
// outside the input.
__device__ int64_t pixel_index(const GridSampleParams& p, int a, int64_t i, bool& zero) {
  const int64_t d = p.in[a];
  if (i >= 0 && i < d) return i;
  if (p.padding == 0) {
    zero = true;
    return 0;
  }
  if (p.padding == 2) {
    const double lo = p.align_corners ? 0.0 : -0.5;
    const double hi = p.align_corners ? static_cast<double>(d) - 1 : static_cast<double>(d) - 0.5;
    i = trunc_i64(reflect(static_cast<double>(i), lo, hi));
  }
  return i < 0 ? 0 : (i > d - 1 ? d - 1 : i);
}

template <class T>
__global__ void grid_sample_kernel(GridSampleParams p, const T* x, const T* grid, T* y) {
  const int k = p.axes;
  int64_t plane = 1;
  for (int a = 0; a < k; ++a) plane *= p.in[a];
  const int64_t taps1 = p.mode == 0 ? 1 : p.mode == 1 ? 2 : 4;
  int64_t taps = 1;
  for (int a = 0; a < k; ++a) taps *= taps1;
  const int64_t total = p.N * p.C * p.points;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += stride) {
    const int64_t pt = o % p.points, nn = o / (p.points * p.C);
    const T* gp = grid + (nn * p.points + pt) * k;
    Axis ax[kGridMaxAxes];
    for (int a = 0; a < k; ++a) ax[a] = setup_axis(p, a, to_f32(gp[k - 1 - a]));
    const T* xp = x + (o / p.points) * plane;  // plane (nn, ch)
    float acc = 0.0f;
    for (int64_t tap = 0; tap < taps; ++tap) {
      float weight = 1.0f;
      bool zero = false;
      int64_t rest = tap, index[kGridMaxAxes];
      for (int a = k; a-- > 0;) {
        const int64_t j = rest % taps1;
        rest /= taps1;
        weight *= static_cast<float>(ax[a].w[j]);
        index[a] = pixel_index(p, a, wrap_add(ax[a].first, j), zero);
      }
      if (zero) continue;
      int64_t offset = 0;
      for (int a = 0; a < k; ++a) offset = offset * p.in[a] + index[a];
      acc += weight * to_f32(xp[offset]);
    }
    y[o] = from_f32<T>(acc);
  }
}

}  // namespace

cudaError_t grid_sample(ampx_dtype dt, const GridSampleParams& p, const void* x, const void* grid,
                        void* y, cudaStream_t stream) {
  const int64_t total = p.N * p.C * p.points;
  if (total == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    grid_sample_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<const T*>(grid), static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
