// Speed of the reference kernels (cpu_ref, the numerical oracle) on the
// shapes of the built-in models: the cnn at batch 16, the mlp, one encoder
// layer and a 64x1024x1024 Gemm, in f32, f16 and bf16 (16-bit storage, f32
// compute). The kernels run directly, one after another, with no executor.
// Their correctness at these sizes is tested in tests/cpu_ref
// (Contraction.GemmLarge, Conv2dLargeEnoughToThread, MatMulThreaded, ...).
// Usage: ampx_cpu_ref_bench [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <utility>

// The kernel tests' host tensors, node builder and seeded random data.
#include "harness.hpp"

namespace ampx::test {
namespace {

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
    s.k = reference::make_kernel(nb.desc());
    for (Tensor* t : ins) s.in.push_back(t->bytes.data());
    s.out.push_back(tensors_.back()->bytes.data());
    steps_.push_back(std::move(s));
    return tensors_.back().get();
  }

  // Every step once, in order.
  void run() {
    for (auto& s : steps_) s.k->run(s.in, s.out);
  }

 private:
  struct Step {
    std::unique_ptr<reference::CpuKernel> k;
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

void build_cnn16(Graph& g) {
  build_cnn(g, 16);
}
void build_gemm(Graph& g) {
  g.node(op("Gemm"), {g.param({64, 1024}), g.param({1024, 1024})}, {64, 1024});
}

void run_workload(benchmark::State& state, void (*build)(Graph&), ampx_dtype dt) {
  Graph g(dt);
  build(g);
  g.run();  // warm-up: first touch of every buffer
  for (auto _ : state) g.run();
  state.SetLabel(std::string(dtype_str(dt)) + ", " + std::to_string(reference::max_threads()) +
                 " threads");
}

void register_all() {
  const std::pair<const char*, void (*)(Graph&)> workloads[] = {
      {"cnn_batch16", build_cnn16},
      {"mlp_batch64_4x1024", build_mlp},
      {"encoder_layer_128x256", build_encoder_layer},
      {"gemm_64x1024x1024", build_gemm}};
  for (const auto& [name, build] : workloads)
    for (ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16})
      benchmark::RegisterBenchmark((std::string("cpu_ref/") + name + "/" + dtype_str(dt)).c_str(),
                                   run_workload, build, dt)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
}

}  // namespace
}  // namespace ampx::test

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  ampx::test::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
