// Det and Col2Im against float64 references written from ONNX's
// definitions (cofactor expansion; ONNX's reference col2im loop), and their
// one-line refusals of bad shapes and attributes.
#include <cmath>
#include <functional>
#include <string>

#include "harness.hpp"

namespace ampx::test {
namespace {

using Ints = std::vector<int64_t>;

class VisionOps : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  ampx_dtype dt() const { return GetParam(); }
  Rng rng{11};
};

// The determinant by cofactor expansion along the first row (no pivoting:
// independent of the kernel's elimination).
double cofactor_det(const std::vector<double>& a, int64_t m) {
  if (m == 1) return a[0];
  double det = 0;
  for (int64_t j = 0; j < m; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < m; ++r)
      for (int64_t c = 0; c < m; ++c)
        if (c != j) minor.push_back(a[static_cast<size_t>(r * m + c)]);
    det += (j % 2 ? -1.0 : 1.0) * a[static_cast<size_t>(j)] * cofactor_det(minor, m - 1);
  }
  return det;
}

TEST_P(VisionOps, DetMatchesCofactorExpansion) {
  for (const Ints& dims : {Ints{1, 1}, Ints{3, 3}, Ints{2, 3, 4, 4}, Ints{2, 5, 5}}) {
    const int64_t m = dims.back();
    const Tensor x = Tensor::of(dt(), dims, rng.nonzero_vec(static_cast<size_t>(numel_of(dims))));
    const Ints yd(dims.begin(), dims.end() - 2);
    NodeBuilder nb("Det", "d");
    add_input(nb, x);
    nb.output(dt(), yd);
    const std::vector<double> xv = x.values();
    std::vector<double> want;
    for (size_t b = 0; b < xv.size(); b += static_cast<size_t>(m * m))
      want.push_back(cofactor_det({xv.begin() + static_cast<std::ptrdiff_t>(b),
                                   xv.begin() + static_cast<std::ptrdiff_t>(b + m * m)},
                                  m));
    expect_close(run_node(nb, {&x})[0], want, "Det " + std::to_string(m));
  }
}

// A zero leading pivot needs a row swap (the sign flips), and a singular
// matrix gives exactly 0.
TEST_P(VisionOps, DetPivotsAndSingular) {
  const Tensor x = Tensor::of(dt(), {2, 3, 3},
                              {0, 2, 1, 1, 0, 3, 4, 1, 0,  //
                               1, 2, 3, 2, 4, 6, 0, 1, 1});
  NodeBuilder nb("Det", "d");
  add_input(nb, x);
  nb.output(dt(), {2});
  const std::vector<double> got = run_node(nb, {&x})[0].values();
  // 0*(0-3) - 2*(0-12) + 1*(1-0) = 25
  EXPECT_EQ(got[0], 25.0);
  EXPECT_EQ(got[1], 0.0);
}

// ONNX's reference col2im (onnx/reference/ops/op_col2im.py), any rank.
std::vector<double> col2im_ref(const std::vector<double>& x, int64_t n, int64_t c,
                               const Ints& image, const Ints& block, const Ints& strides,
                               const Ints& dilations, const Ints& pads) {
  const size_t k = image.size();
  Ints blocks;
  for (size_t a = 0; a < k; ++a)
    blocks.push_back(
        (image[a] + pads[a] + pads[a + k] - dilations[a] * (block[a] - 1) - 1) / strides[a] + 1);
  const int64_t cells = numel_of(block), positions = numel_of(blocks), plane = numel_of(image);
  std::vector<double> y(static_cast<size_t>(n * c * plane), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t row = 0; row < c * cells; ++row) {
      const Ints off = unravel(row % cells, block);
      for (int64_t l = 0; l < positions; ++l) {
        const Ints pos = unravel(l, blocks);
        Ints at(k);
        bool inside = true;
        for (size_t a = 0; a < k; ++a) {
          at[a] = pos[a] * strides[a] - pads[a] + off[a] * dilations[a];
          inside = inside && at[a] >= 0 && at[a] < image[a];
        }
        if (inside)
          y[static_cast<size_t>((b * c + row / cells) * plane + ravel(at, image))] +=
              x[static_cast<size_t>((b * c * cells + row) * positions + l)];
      }
    }
  return y;
}

TEST_P(VisionOps, Col2ImMatchesOnnxReference) {
  struct C {
    int64_t n, c;
    Ints image, block, strides, dilations, pads;
  };
  const C cases[] = {
      {1, 1, {5, 5}, {1, 5}, {1, 1}, {1, 1}, {0, 0, 0, 0}},  // ONNX's col2im case
      {2, 2, {5, 6}, {2, 3}, {1, 2}, {2, 1}, {1, 0, 0, 1}},
      {1, 3, {6, 4}, {3, 2}, {2, 1}, {1, 2}, {1, 1, 2, 0}},
      {1, 2, {7}, {3}, {1}, {1}, {0, 0}},
      {1, 1, {3, 4, 5}, {1, 1, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}},  // col2im_5d
  };
  for (const C& c : cases) {
    const size_t k = c.image.size();
    int64_t positions = 1;
    for (size_t a = 0; a < k; ++a)
      positions *=
          (c.image[a] + c.pads[a] + c.pads[a + k] - c.dilations[a] * (c.block[a] - 1) - 1) /
              c.strides[a] +
          1;
    const Ints xd{c.n, c.c * numel_of(c.block), positions};
    const Tensor x = Tensor::of(dt(), xd, rng.nonzero_vec(static_cast<size_t>(numel_of(xd))));
    Ints yd{c.n, c.c};
    yd.insert(yd.end(), c.image.begin(), c.image.end());
    NodeBuilder nb("Col2Im", "c");
    add_input(nb, x);
    nb.output(dt(), yd)
        .attr_ints("image_shape", c.image)
        .attr_ints("block_shape", c.block)
        .attr_ints("strides", c.strides)
        .attr_ints("dilations", c.dilations)
        .attr_ints("pads", c.pads);
    expect_close(run_node(nb, {&x})[0],
                 col2im_ref(x.values(), c.n, c.c, c.image, c.block, c.strides, c.dilations, c.pads),
                 "Col2Im " + std::to_string(k) + "-D");
  }
}

TEST(VisionOps, BadShapesAndAttributesAreOneLineErrors) {
  const auto kernel = [](NodeBuilder& nb) { (void)reference::make_kernel(nb.desc()); };
  NodeBuilder det("Det", "d");
  det.input(AMPX_DTYPE_F32, {2, 3, 4}).output(AMPX_DTYPE_F32, {2});
  expect_throw_msg([&] { kernel(det); }, {"node 'd'", "square matrices"});
  NodeBuilder col("Col2Im", "c");
  col.input(AMPX_DTYPE_F32, {1, 4, 9})
      .output(AMPX_DTYPE_F32, {1, 1, 4, 4})
      .attr_ints("image_shape", {4, 4})
      .attr_ints("block_shape", {2, 2});  // 3 x 3 positions, L 9: fits
  EXPECT_NO_THROW(kernel(col));
  NodeBuilder wrong_l("Col2Im", "c");
  wrong_l.input(AMPX_DTYPE_F32, {1, 4, 8})
      .output(AMPX_DTYPE_F32, {1, 1, 4, 4})
      .attr_ints("image_shape", {4, 4})
      .attr_ints("block_shape", {2, 2});
  expect_throw_msg([&] { kernel(wrong_l); }, {"node 'c'", "fewer than the block positions"});
  NodeBuilder too_big("Col2Im", "c");
  too_big.input(AMPX_DTYPE_F32, {1, 12, 9})
      .output(AMPX_DTYPE_F32, {1, 1, 4, 4})
      .attr_ints("image_shape", {4, 4})
      .attr_ints("block_shape", {2, 6});
  expect_throw_msg([&] { kernel(too_big); }, {"node 'c'", "does not fit"});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, VisionOps, float_dtypes(), DtypeName());
INSTANTIATE_TEST_SUITE_P(Float64, VisionOps, ::testing::Values(AMPX_DTYPE_F64), DtypeName());

}  // namespace
}  // namespace ampx::test
