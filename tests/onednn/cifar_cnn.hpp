// The issue-37 CIFAR-shaped CNN (MindSpore's mixed-precision tutorial at
// 32x32) with BatchNorm kept, for the onednn training tests: conv3x3 3->32
// (no bias), BatchNorm, ReLU, max pool 2; conv3x3 32->64 (no bias),
// BatchNorm, ReLU, max pool 2; flatten, dense 512, ReLU, dense 10; batch 32.
#pragma once

#include <ampx/ir/builder.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace ampx::test {

inline Graph cifar_cnn() {
  GraphBuilder b("cifar-cnn", 0xc1fa);
  ValueId x = b.input("input", DType::kF32, {32, 3, 32, 32});
  const AttrMap pool{{"kernel_shape", std::vector<int64_t>{2, 2}},
                     {"strides", std::vector<int64_t>{2, 2}}};
  x = b.conv2d("conv1", x, 32, 3, 1, 1, 1, false);
  x = b.unary(OpType::kRelu, "relu1", b.batch_norm("bn1", x));
  x = b.add(OpType::kMaxPool, "pool1", {x}, pool);
  x = b.conv2d("conv2", x, 64, 3, 1, 1, 1, false);
  x = b.unary(OpType::kRelu, "relu2", b.batch_norm("bn2", x));
  x = b.add(OpType::kMaxPool, "pool2", {x}, pool);
  x = b.add(OpType::kFlatten, "flatten", {x}, {{"axis", int64_t{1}}});
  x = b.unary(OpType::kRelu, "relu3", b.dense("fc1", x, 512));
  b.output(b.dense("fc2", x, 10));
  return std::move(b).build();
}

}  // namespace ampx::test
