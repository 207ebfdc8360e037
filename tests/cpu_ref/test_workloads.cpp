// Speed of the reference kernels on the shapes of the built-in models (cnn,
// mlp, encoder). Prints timings; asserts only a generous bound, and only in
// optimised, unsanitised builds.
#include <chrono>
#include <cstdio>
#include <memory>

#include "harness.hpp"

namespace ampx::test {
namespace {

#if defined(__SANITIZE_ADDRESS__) || !defined(NDEBUG)
constexpr bool kTimed = false;
#else
constexpr bool kTimed = true;
#endif
// "Well under a second on 2 cores" is the goal; the bound leaves room for
// loaded CI machines.
constexpr double kBoundMs = 2000;

class Graph {
 public:
  explicit Graph(ampx_dtype dt) : dt_(dt), rng_(11) {}

  Tensor* param(std::vector<int64_t> dims, double lo = 0, double hi = 0) {
    auto t = std::make_unique<Tensor>(random_tensor(rng_, dt_, std::move(dims)));
    if (hi > lo) {
      for (size_t i = 0; i < static_cast<size_t>(t->numel()); ++i) t->set(i, rng_.uniform(lo, hi));
    }
    tensors_.push_back(std::move(t));
    return tensors_.back().get();
  }

  Tensor* node(NodeBuilder nb, std::vector<Tensor*> ins, std::vector<int64_t> out_dims) {
    for (Tensor* t : ins) add_input(nb, *t);
    nb.output(dt_, out_dims);
    tensors_.push_back(std::make_unique<Tensor>(Tensor::zeros(dt_, std::move(out_dims))));
    Step s;
    s.k = cpu_ref::make_kernel(nb.desc());
    for (Tensor* t : ins) s.in.push_back(t->bytes.data());
    s.out.push_back(tensors_.back()->bytes.data());
    steps_.push_back(std::move(s));
    return tensors_.back().get();
  }

  // Best of `reps` runs of every step, in milliseconds (first run warms up).
  double time_ms(int reps = 3) {
    if (!kTimed) reps = 1;  // sanitized / debug: just exercise the kernels
    run();
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      best = std::min(
          best,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  }

  ampx_dtype dt() const { return dt_; }

 private:
  void run() {
    for (auto& s : steps_) s.k->run(s.in, s.out);
  }
  struct Step {
    std::unique_ptr<cpu_ref::CpuKernel> k;
    std::vector<const void*> in;
    std::vector<void*> out;
  };
  ampx_dtype dt_;
  Rng rng_;
  std::vector<std::unique_ptr<Tensor>> tensors_;
  std::vector<Step> steps_;
};

NodeBuilder op(const char* type) {
  return NodeBuilder(type, type);
}

void build_cnn(Graph& g, int64_t N) {
  Tensor* x = g.param({N, 3, 32, 32});
  int64_t c = 3, hw = 32;
  for (int64_t m : {64, 128}) {
    Tensor* w = g.param({m, c, 3, 3});
    Tensor* b = g.param({m});
    x = g.node(std::move(op("Conv2d").attr_ints("pads", {1, 1, 1, 1})), {x, w, b}, {N, m, hw, hw});
    x = g.node(op("BatchNorm"),
               {x, g.param({m}), g.param({m}), g.param({m}), g.param({m}, 0.5, 1.5)},
               {N, m, hw, hw});
    x = g.node(op("Relu"), {x}, {N, m, hw, hw});
    x = g.node(
        std::move(op("MaxPool").attr_ints("kernel_shape", {2, 2}).attr_ints("strides", {2, 2})),
        {x}, {N, m, hw / 2, hw / 2});
    c = m;
    hw /= 2;
  }
  x = g.node(op("Flatten"), {x}, {N, 8192});
  x = g.node(std::move(op("Gemm").attr_int("transB", 1)), {x, g.param({512, 8192}), g.param({512})},
             {N, 512});
  x = g.node(op("Relu"), {x}, {N, 512});
  g.node(std::move(op("Gemm").attr_int("transB", 1)), {x, g.param({10, 512}), g.param({10})},
         {N, 10});
}

void build_mlp(Graph& g) {
  Tensor* x = g.param({64, 1024});
  for (int i = 0; i < 4; ++i) {
    x = g.node(op("Gemm"), {x, g.param({1024, 1024}), g.param({1024})}, {64, 1024});
    if (i < 3) x = g.node(op("Relu"), {x}, {64, 1024});
  }
}

void build_encoder_layer(Graph& g) {
  const int64_t S = 128, D = 256, H = 4, Dh = 64, F = 1024;
  Tensor* x = g.param({S, D});
  Tensor* h = g.node(op("LayerNorm"), {x, g.param({D}), g.param({D})}, {S, D});
  auto heads = [&](Tensor* t, std::vector<int64_t> perm, std::vector<int64_t> dims) {
    t = g.node(std::move(op("Reshape").attr_ints("shape", {S, H, Dh})), {t}, {S, H, Dh});
    return g.node(std::move(op("Transpose").attr_ints("perm", perm)), {t}, dims);
  };
  Tensor* q = heads(g.node(op("MatMul"), {h, g.param({D, D})}, {S, D}), {1, 0, 2}, {H, S, Dh});
  Tensor* k = heads(g.node(op("MatMul"), {h, g.param({D, D})}, {S, D}), {1, 2, 0}, {H, Dh, S});
  Tensor* v = heads(g.node(op("MatMul"), {h, g.param({D, D})}, {S, D}), {1, 0, 2}, {H, S, Dh});
  Tensor* s = g.node(op("MatMul"), {q, k}, {H, S, S});
  s = g.node(op("Mul"), {s, g.param({})}, {H, S, S});
  s = g.node(op("Softmax"), {s}, {H, S, S});
  Tensor* a = g.node(op("MatMul"), {s, v}, {H, S, Dh});
  a = g.node(std::move(op("Transpose").attr_ints("perm", {1, 0, 2})), {a}, {S, H, Dh});
  a = g.node(std::move(op("Reshape").attr_ints("shape", {S, D})), {a}, {S, D});
  a = g.node(op("MatMul"), {a, g.param({D, D})}, {S, D});
  x = g.node(op("Add"), {x, a}, {S, D});
  h = g.node(op("LayerNorm"), {x, g.param({D}), g.param({D})}, {S, D});
  h = g.node(op("MatMul"), {h, g.param({D, F})}, {S, F});
  h = g.node(op("Add"), {h, g.param({F})}, {S, F});
  h = g.node(op("Gelu"), {h}, {S, F});
  h = g.node(op("MatMul"), {h, g.param({F, D})}, {S, D});
  g.node(op("Add"), {x, h}, {S, D});
}

class Workloads : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  void report(const char* what, double ms) {
    std::printf("[ timing ] %-28s %-4s %8.2f ms (%d threads)\n", what, dtype_str(GetParam()), ms,
                cpu_ref::max_threads());
    if (kTimed) {
      EXPECT_LT(ms, kBoundMs) << what;
    }
  }
};

TEST_P(Workloads, Cnn16) {
  Graph g(GetParam());
  build_cnn(g, 16);
  report("cnn (N=16)", g.time_ms());
}
TEST_P(Workloads, Mlp64) {
  Graph g(GetParam());
  build_mlp(g);
  report("mlp (batch 64, 4x1024^2)", g.time_ms());
}
TEST_P(Workloads, EncoderLayer) {
  Graph g(GetParam());
  build_encoder_layer(g);
  report("encoder layer (128x256)", g.time_ms());
}
TEST_P(Workloads, Gemm64x1024x1024) {
  Graph g(GetParam());
  g.node(op("Gemm"), {g.param({64, 1024}), g.param({1024, 1024})}, {64, 1024});
  report("Gemm 64x1024x1024", g.time_ms(5));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Workloads, float_dtypes(), DtypeName());

}  // namespace
}  // namespace ampx::test
