// max_relative_error(), the metric `ampx run` reports and judges by: NaN and
// infinities on either side.
#include <ampx/exec/host_tensor.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace ampx {
namespace {

HostTensor f32(std::vector<float> v) {
  HostTensor t;
  t.name = "y";
  t.type = {DType::kF32, {static_cast<int64_t>(v.size())}};
  t.data.resize(v.size() * sizeof(float));
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

TEST(MaxRelativeError, NormwiseOverTheFiniteElements) {
  EXPECT_DOUBLE_EQ(max_relative_error(f32({1, 2, 5}), f32({1, 2, 4})), 0.25);
  EXPECT_DOUBLE_EQ(max_relative_error(f32({0, 0.5}), f32({0, 0})), 0.5);  // absolute
}

TEST(MaxRelativeError, NonFiniteElementsMatchOnlyTheirLike) {
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  constexpr float inf = std::numeric_limits<float>::infinity();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(max_relative_error(f32({nan, 1}), f32({1, 1})), kInf);
  EXPECT_EQ(max_relative_error(f32({1, 1}), f32({nan, 1})), kInf);  // a NaN lost
  EXPECT_DOUBLE_EQ(max_relative_error(f32({nan, 1}), f32({nan, 1})), 0.0);
  EXPECT_EQ(max_relative_error(f32({-inf, 1}), f32({inf, 1})), kInf);
  EXPECT_EQ(max_relative_error(f32({5, 1}), f32({inf, 1})), kInf);
  // An infinity in the reference leaves the other elements' error as it is.
  EXPECT_DOUBLE_EQ(max_relative_error(f32({inf, 2}), f32({inf, 1})), 1.0);
}

}  // namespace
}  // namespace ampx
