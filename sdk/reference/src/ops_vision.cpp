// Det and Col2Im (docs/OPS.md).
//   Det: LU factorisation with partial pivoting of each matrix, in f64
//        whatever the storage (the product of M pivots loses digits fast),
//        the sign flipped per row swap; an exactly zero pivot column gives 0.
//   Col2Im: every column element added into the image cell its block
//        position and kernel offset land on (ONNX's reference, PyTorch's
//        col2im): cells the padding covers are dropped. Accumulated in T,
//        one task per (n, c) image plane.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

template <class T>
class DetKernel final : public CpuKernel {
 public:
  DetKernel(int64_t batch, int64_t m) : batch_(batch), m_(m) {}

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const int64_t mm = m_ * m_;
    parallel_for(batch_, threads_for(static_cast<double>(batch_ * mm * m_)),
                 [&](int64_t b0, int64_t b1) {
                   std::vector<double> a(static_cast<size_t>(mm));
                   for (int64_t b = b0; b < b1; ++b) {
                     for (int64_t i = 0; i < mm; ++i)
                       a[static_cast<size_t>(i)] = static_cast<double>(x[b * mm + i]);
                     y[b] = static_cast<T>(determinant(a.data()));
                   }
                 });
  }

 private:
  // Gaussian elimination with partial pivoting of the row-major m x m `a`
  // (overwritten).
  double determinant(double* a) const {
    double det = 1;
    for (int64_t k = 0; k < m_; ++k) {
      int64_t p = k;
      for (int64_t i = k + 1; i < m_; ++i)
        if (std::abs(a[i * m_ + k]) > std::abs(a[p * m_ + k])) p = i;
      const double pivot = a[p * m_ + k];
      if (pivot == 0) return 0;
      if (p != k) {
        for (int64_t j = k; j < m_; ++j) std::swap(a[p * m_ + j], a[k * m_ + j]);
        det = -det;
      }
      det *= pivot;
      for (int64_t i = k + 1; i < m_; ++i) {
        const double f = a[i * m_ + k] / pivot;
        if (f == 0) continue;
        for (int64_t j = k + 1; j < m_; ++j) a[i * m_ + j] -= f * a[k * m_ + j];
      }
    }
    return det;
  }

  int64_t batch_, m_;
};

struct Col2ImGeo {
  int64_t planes = 0;  // N * C
  std::vector<int64_t> image, block, strides, dilations, pads_begin, blocks;
  int64_t image_cells = 0, block_cells = 0, positions = 0;
};

template <class T>
class Col2ImKernel final : public CpuKernel {
 public:
  explicit Col2ImKernel(Col2ImGeo g) : g_(std::move(g)) {}

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const size_t k = g_.image.size();
    parallel_for(g_.planes,
                 threads_for(static_cast<double>(g_.planes * g_.block_cells * g_.positions)),
                 [&](int64_t p0, int64_t p1) {
                   std::vector<int64_t> off(k), pos(k);
                   for (int64_t p = p0; p < p1; ++p) {
                     T* img = y + p * g_.image_cells;
                     for (int64_t i = 0; i < g_.image_cells; ++i) img[i] = T(0);
                     const T* col = x + p * g_.block_cells * g_.positions;
                     for (int64_t kc = 0; kc < g_.block_cells; ++kc) {
                       unravel(kc, g_.block, off);
                       for (int64_t l = 0; l < g_.positions; ++l) {
                         unravel(l, g_.blocks, pos);
                         int64_t cell = 0;
                         bool inside = true;
                         for (size_t a = 0; a < k && inside; ++a) {
                           const int64_t at =
                               pos[a] * g_.strides[a] - g_.pads_begin[a] + off[a] * g_.dilations[a];
                           inside = at >= 0 && at < g_.image[a];
                           cell = cell * g_.image[a] + at;
                         }
                         if (inside) img[cell] += col[kc * g_.positions + l];
                       }
                     }
                   }
                 });
  }

 private:
  static void unravel(int64_t i, const std::vector<int64_t>& dims, std::vector<int64_t>& out) {
    for (size_t a = dims.size(); a-- > 0;) {
      out[a] = i % dims[a];
      i /= dims[a];
    }
  }

  Col2ImGeo g_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_det(Ctx& c) {
  c.arity(1, 1, 1);
  const auto& x = c.in[0].dims;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    c.fail("input " + dims_str(x) + " is not [*, M, M]");
  const std::vector<int64_t> batch(x.begin(), x.end() - 2);
  c.dims(c.out[0], "output", batch);
  return typed<DetKernel>(c, product(batch), x.back());
}

std::unique_ptr<CpuKernel> make_col2im(Ctx& c) {
  c.arity(1, 1, 1);
  const auto& x = c.in[0].dims;
  if (x.size() != 3) c.fail("input " + dims_str(x) + " is not [N, C * prod(block_shape), L]");
  Col2ImGeo g;
  g.image = c.v.get_ints("image_shape", {});
  const size_t k = g.image.size();
  if (k == 0) c.fail("attribute 'image_shape' is empty");
  g.block = c.ints_n("block_shape", k, {});
  g.strides = c.ints_n("strides", k, std::vector<int64_t>(k, 1));
  g.dilations = c.ints_n("dilations", k, std::vector<int64_t>(k, 1));
  const auto pads = c.ints_n("pads", 2 * k, std::vector<int64_t>(2 * k, 0));
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(k));
  for (size_t a = 0; a < k; ++a) {
    if (g.image[a] < 1 || g.block[a] < 1 || g.strides[a] < 1 || g.dilations[a] < 1 || pads[a] < 0 ||
        pads[a + k] < 0)
      c.fail("image_shape, block_shape, strides, dilations must be > 0 and pads >= 0");
    const int64_t reach = g.dilations[a] * (g.block[a] - 1) + 1;
    const int64_t span = g.image[a] + pads[a] + pads[a + k];
    if (span < reach) c.fail("the block does not fit image axis " + std::to_string(a));
    g.blocks.push_back((span - reach) / g.strides[a] + 1);
  }
  g.block_cells = product(g.block);
  g.image_cells = product(g.image);
  g.positions = product(g.blocks);
  if (x[1] % g.block_cells != 0 || x[2] != g.positions)
    c.fail("input " + dims_str(x) + " does not match the blocks of image_shape " +
           dims_str(g.image));
  std::vector<int64_t> y{x[0], x[1] / g.block_cells};
  y.insert(y.end(), g.image.begin(), g.image.end());
  c.dims(c.out[0], "output", y);
  g.planes = y[0] * y[1];
  return typed<Col2ImKernel>(c, std::move(g));
}

}  // namespace ampx::reference::detail
