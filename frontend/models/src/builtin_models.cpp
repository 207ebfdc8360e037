#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace ampx {
namespace {

// MindSpore's mixed-precision tutorial network: two conv blocks, two dense.
Graph make_cnn() {
  GraphBuilder b("cnn");
  const int64_t batch = 8;
  ValueId x = b.input("input", DType::kF32, {batch, 3, 32, 32});
  const AttrMap pool{{"kernel_shape", std::vector<int64_t>{2, 2}},
                     {"strides", std::vector<int64_t>{2, 2}}};
  x = b.conv2d("conv1", x, 64, 3, 1, 1);
  x = b.batch_norm("bn1", x);
  x = b.unary(OpType::kRelu, "relu1", x);
  x = b.add(OpType::kMaxPool, "pool1", {x}, pool);
  x = b.conv2d("conv2", x, 128, 3, 1, 1);
  x = b.batch_norm("bn2", x);
  x = b.unary(OpType::kRelu, "relu2", x);
  x = b.add(OpType::kMaxPool, "pool2", {x}, pool);
  x = b.add(OpType::kFlatten, "flatten", {x}, {{"axis", int64_t{1}}});
  x = b.dense("fc1", x, 512);
  x = b.unary(OpType::kRelu, "relu3", x);
  x = b.dense("fc2", x, 10);
  b.output(x);
  return std::move(b).build();
}

Graph make_mlp() {
  GraphBuilder b("mlp");
  ValueId x = b.input("input", DType::kF32, {64, 1024});
  for (int i = 1; i <= 4; ++i) {
    x = b.dense("fc" + std::to_string(i), x, 1024);
    if (i < 4) x = b.unary(OpType::kRelu, "relu" + std::to_string(i), x);
  }
  b.output(x);
  return std::move(b).build();
}

// One pre-norm transformer encoder block.
Graph make_encoder() {
  GraphBuilder b("encoder");
  const int64_t seq = 128, width = 256, heads = 4, head_dim = width / heads, hidden = 1024;
  const ValueId x = b.input("input", DType::kF32, {1, seq, width});
  auto matmul_bias = [&](const std::string& name, ValueId in, int64_t k, int64_t n) {
    const float scale = std::sqrt(6.0f / static_cast<float>(k));
    const ValueId w = b.random_weight(name + ".weight", {k, n}, scale);
    const ValueId y = b.add(OpType::kMatMul, name, {in, w});
    return b.add(OpType::kAdd, name + ".add_bias", {y, b.random_weight(name + ".bias", {n}, 0.1f)});
  };
  // [1, seq, width] -> [1, heads, seq, head_dim]
  auto split_heads = [&](const std::string& name, ValueId v) {
    v = b.add(OpType::kReshape, name + ".reshape", {v},
              {{"shape", std::vector<int64_t>{1, seq, heads, head_dim}}});
    return b.add(OpType::kTranspose, name + ".transpose", {v},
                 {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  };

  ValueId h = b.layer_norm("ln1", x);
  const ValueId qkv = matmul_bias("qkv", h, width, 3 * width);
  auto part = [&](const std::string& name, int64_t i) {
    return b.add(OpType::kSlice, name, {qkv},
                 {{"starts", std::vector<int64_t>{i * width}},
                  {"ends", std::vector<int64_t>{(i + 1) * width}},
                  {"axes", std::vector<int64_t>{2}}});
  };
  const ValueId q = split_heads("q", part("q.slice", 0));
  const ValueId k = split_heads("k", part("k.slice", 1));
  const ValueId v = split_heads("v", part("v.slice", 2));
  const ValueId kt =
      b.add(OpType::kTranspose, "k.transpose_t", {k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  ValueId scores = b.add(OpType::kMatMul, "attn.scores", {q, kt});
  const float inv_sqrt = 1.0f / std::sqrt(static_cast<float>(head_dim));
  scores = b.add(
      OpType::kMul, "attn.scale",
      {scores, b.constant("attn.scale_factor", DType::kF32, {1}, std::vector<float>{inv_sqrt})});
  const ValueId probs = b.add(OpType::kSoftmax, "attn.softmax", {scores}, {{"axis", int64_t{-1}}});
  ValueId ctx = b.add(OpType::kMatMul, "attn.context", {probs, v});
  ctx = b.add(OpType::kTranspose, "attn.merge_transpose", {ctx},
              {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  ctx = b.add(OpType::kReshape, "attn.merge_reshape", {ctx},
              {{"shape", std::vector<int64_t>{1, seq, width}}});
  const ValueId attn_out = matmul_bias("attn.out", ctx, width, width);
  const ValueId res1 = b.add(OpType::kAdd, "residual1", {x, attn_out});

  h = b.layer_norm("ln2", res1);
  h = matmul_bias("mlp.fc1", h, width, hidden);
  h = b.add(OpType::kGelu, "mlp.gelu", {h}, {{"approximate", std::string("none")}});
  h = matmul_bias("mlp.fc2", h, hidden, width);
  const ValueId out = b.add(OpType::kAdd, "residual2", {res1, h});
  b.output(out);
  return std::move(b).build();
}

// The 8x8 handwritten digits (builtin:digits) classifier `ampx train`
// trains: the MindSpore tutorial CNN's shape at this size, two conv blocks
// (conv, BatchNorm, ReLU, 2x2 max pool) and two dense layers.
Graph make_digits_cnn() {
  GraphBuilder b("digits-cnn", 0xd161);
  ValueId x = b.input("input", DType::kF32, {32, 1, 8, 8});
  const AttrMap pool{{"kernel_shape", std::vector<int64_t>{2, 2}},
                     {"strides", std::vector<int64_t>{2, 2}}};
  x = b.conv2d("conv1", x, 16, 3, 1, 1);
  x = b.batch_norm("bn1", x);
  x = b.unary(OpType::kRelu, "relu1", x);
  x = b.add(OpType::kMaxPool, "pool1", {x}, pool);  // 4x4
  x = b.conv2d("conv2", x, 32, 3, 1, 1);
  x = b.batch_norm("bn2", x);
  x = b.unary(OpType::kRelu, "relu2", x);
  x = b.add(OpType::kMaxPool, "pool2", {x}, pool);  // 2x2
  x = b.add(OpType::kFlatten, "flatten", {x}, {{"axis", int64_t{1}}});
  x = b.dense("fc1", x, 64);
  x = b.unary(OpType::kRelu, "relu3", x);
  x = b.dense("fc2", x, 10);
  b.output(x);
  return std::move(b).build();
}

}  // namespace

std::vector<std::string_view> builtin_model_names() {
  return {"cnn", "mlp", "encoder", "digits-cnn"};
}

Graph make_builtin_model(std::string_view name) {
  if (name == "cnn") return make_cnn();
  if (name == "mlp") return make_mlp();
  if (name == "encoder") return make_encoder();
  if (name == "digits-cnn") return make_digits_cnn();
  std::string known;
  for (auto n : builtin_model_names()) known += (known.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("unknown built-in model '" + std::string(name) +
                              "' (known: " + known + ")");
}

Graph make_residual_blocks(int64_t target_nodes) {
  GraphBuilder b("synthetic", 1);
  ValueId x = b.input("x", DType::kF32, {8, 16});
  const ValueId w = b.random_weight("w", {16, 16}, 0.1f);
  int64_t nodes = 0;
  for (int64_t i = 0; nodes < target_nodes; ++i) {
    // Appended rather than `"b" + to_string(i)`: GCC 12 warns falsely on that.
    std::string p = "b";
    p += std::to_string(i);
    const ValueId h = b.add(OpType::kMatMul, p + ".mm", {x, w});
    const ValueId r = b.add(OpType::kAdd, p + ".add", {h, x});
    x = b.unary(OpType::kRelu, p + ".relu", r);
    nodes += 3;
    if (i % 5 == 4) {
      x = b.layer_norm(p + ".ln", x);
      ++nodes;
    }
  }
  b.output(x);
  return std::move(b).build();
}

}  // namespace ampx
