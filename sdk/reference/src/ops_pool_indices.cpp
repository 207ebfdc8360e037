// MaxPoolIndices: where MaxPool's maximum is, as ONNX MaxPool's Indices
// output numbers it: a flat index into X, the plane (n * C + c) times H * W
// plus the cell's offset in the plane, row-major (storage_order 0) or
// column-major (storage_order 1). The first maximum of the window in its
// row-major walk wins, as in ONNX's reference; the first NaN wins over any
// number, as MaxPool propagates it. A window whose taps miss X is -1.
#include <cmath>

#include "common.hpp"
#include "parallel.hpp"
#include "window.hpp"

namespace ampx::reference::detail {
namespace {

template <class T>
class MaxPoolIndicesKernel final : public CpuKernel {
 public:
  MaxPoolIndicesKernel(PoolShape s, bool column_major) : s_(s), column_major_(column_major) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const PoolShape& s = s_;
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<int64_t*>(out[0]);
    const double work = static_cast<double>(s.planes) * s.OH * s.OW * s.kH * s.kW;
    parallel_for(s.planes, threads_for(work), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) plane(x + p * s.H * s.W, y + p * s.OH * s.OW, p);
    });
  }

 private:
  void plane(const T* x, int64_t* y, int64_t p) const {
    const PoolShape& s = s_;
    for (int64_t oh = 0; oh < s.OH; ++oh) {
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        const PoolWindow win = pool_window(s, oh, ow, false);
        // pads < the dilated window still lets its taps step over X (H 1,
        // kH 2, dilation 3, top pad 2): MaxPool's value there is the
        // padding's -inf, and no cell of X holds it: -1, as ONNX's
        // reference starts its index at.
        if (win.hs >= win.he || win.ws >= win.we) {
          y[oh * s.OW + ow] = -1;
          continue;
        }
        int64_t bh = win.hs, bw = win.ws;
        T m = x[bh * s.W + bw];
        for (int64_t h = win.hs; h < win.he && !std::isnan(m); h += s.dh) {
          for (int64_t w = win.ws; w < win.we; w += s.dw) {
            const T v = x[h * s.W + w];
            if (v > m || std::isnan(v)) {
              m = v, bh = h, bw = w;
              if (std::isnan(v)) break;
            }
          }
        }
        const int64_t cell = column_major_ ? bw * s.H + bh : bh * s.W + bw;
        y[oh * s.OW + ow] = p * s.H * s.W + cell;
      }
    }
  }

  PoolShape s_;
  bool column_major_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_maxpool_indices(Ctx& c) {
  c.arity(1, 1, 1);
  c.rank(c.in[0], "input X", 4);
  bool include_pad = false;
  const PoolShape s = pool_shape(c, c.in[0].dims, true, include_pad, true);
  const auto& d = c.in[0].dims;
  c.dims(c.out[0], "output", {d[0], d[1], s.OH, s.OW});
  const int64_t order = c.v.get_int("storage_order", 0);
  if (order != 0 && order != 1) c.fail("attribute 'storage_order' must be 0 or 1");
  return typed<MaxPoolIndicesKernel>(c, s, order == 1);
}

}  // namespace ampx::reference::detail
