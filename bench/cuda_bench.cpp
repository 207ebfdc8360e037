// CUDA benchmark (needs a GPU; scripts/device-check.sh runs it):
//  1. FP16 and BF16 GEMM at 4096^3 and 8192^3: ampx (MatMul through the
//     plugin's C ABI: cuBLASLt underneath) against cublasGemmEx called
//     directly with the same types and f32 accumulation. Ratio = ampx rate /
//     cuBLAS rate; the issue asks for >= 0.95.
//  2. The built-in models on cuda:0: O0 (all f32) against O2 in f16 and
//     bf16, through PluginHost, planner and Executor (Executor::run: copy
//     in, launch every node, synchronise, copy out).
// Prints a Markdown table (and writes it to --out FILE). Without a GPU it
// prints why and exits 2.
//
//   ampx_cuda_bench [--out FILE] [--plugin-dir DIR] [--quick]
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ampx/backend_api.h"

namespace {

using Clock = std::chrono::steady_clock;

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void cublas_ok(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}

// Mean seconds per call of fn over enough calls to take ~`budget` seconds,
// after warm-up; `sync` waits for the device.
double time_per_call(const std::function<void()>& fn, const std::function<void()>& sync,
                     double budget) {
  for (int i = 0; i < 3; ++i) fn();
  sync();
  int n = 1;
  for (;;) {
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) fn();
    sync();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s >= budget || n >= 1 << 14) return s / n;
    n *= s > 0 ? std::max(2, static_cast<int>(budget / s * n * 1.1) / n) : 2;
  }
}

// ------------------------------------------------------------ the plugin

// The cuda plugin through the C ABI, as the executor drives it.
struct AbiPlugin {
  void* lib = nullptr;
  const ampx_plugin_api* api = nullptr;
  ampx_plugin* plugin = nullptr;
  explicit AbiPlugin(const std::string& path) {
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    auto entry = reinterpret_cast<ampx_plugin_entry_fn>(dlsym(lib, AMPX_PLUGIN_ENTRY_SYMBOL));
    if (!entry) throw std::runtime_error("no ampx_plugin_entry in " + path);
    api = entry();
    ampx_plugin_create_args args{};
    args.struct_size = sizeof args;
    args.log_level = 6;
    check(api->plugin_create(&args, &plugin), "plugin_create");
  }
  ~AbiPlugin() {
    if (plugin) api->plugin_destroy(plugin);
    if (lib) dlclose(lib);
  }
  void check(ampx_status* s, const char* what) const {
    if (!s) return;
    const std::string m = api->status_message(s);
    api->status_destroy(s);
    throw std::runtime_error(std::string(what) + ": " + m);
  }
  std::string note() const {
    ampx_plugin_info info{};
    info.struct_size = sizeof info;
    check(api->plugin_info(plugin, &info), "plugin_info");
    return info.note;
  }
  int devices() const {
    int32_t n = 0;
    check(api->device_count(plugin, &n), "device_count");
    return n;
  }
};

// Seconds per MatMul [n,n] x [n,n] -> [n,n] in `dt` through the plugin.
double ampx_gemm(const AbiPlugin& p, ampx_dtype dt, int64_t n, double budget, std::string* note) {
  const int64_t dims[2] = {n, n};
  ampx_tensor_desc t{};
  t.struct_size = sizeof t;
  t.dtype = dt;
  t.rank = 2;
  t.dims = dims;
  const ampx_tensor_desc ins[2] = {t, t};
  ampx_node_desc node{};
  node.struct_size = sizeof node;
  node.op_type = "MatMul";
  node.name = "bench_gemm";
  node.num_inputs = 2;
  node.inputs = ins;
  node.num_outputs = 1;
  node.outputs = &t;
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  p.check(p.api->query_capability(p.plugin, 0, &node, &cap), "query_capability");
  *note = cap.note;
  const uint64_t bytes = static_cast<uint64_t>(n * n) * 2;
  ampx_buffer *a = nullptr, *b = nullptr, *y = nullptr;
  p.check(p.api->buffer_alloc(p.plugin, 0, bytes, &a), "buffer_alloc");
  p.check(p.api->buffer_alloc(p.plugin, 0, bytes, &b), "buffer_alloc");
  p.check(p.api->buffer_alloc(p.plugin, 0, bytes, &y), "buffer_alloc");
  // Small values (0x3000 ~ 0.125 in f16, ~4e-10 in bf16: finite in both).
  std::vector<uint16_t> host(static_cast<size_t>(n * n), 0x3000);
  p.check(p.api->copy_to_device(a, 0, host.data(), bytes), "copy_to_device");
  p.check(p.api->copy_to_device(b, 0, host.data(), bytes), "copy_to_device");
  ampx_kernel* k = nullptr;
  p.check(p.api->kernel_prepare(p.plugin, 0, &node, &k), "kernel_prepare");
  const ampx_buffer_view iv[2] = {{sizeof(ampx_buffer_view), a, 0},
                                  {sizeof(ampx_buffer_view), b, 0}};
  const ampx_buffer_view ov{sizeof(ampx_buffer_view), y, 0};
  const double s =
      time_per_call([&] { p.check(p.api->kernel_launch(k, iv, 2, &ov, 1), "kernel_launch"); },
                    [&] { p.check(p.api->synchronize(p.plugin, 0), "synchronize"); }, budget);
  p.api->kernel_destroy(k);
  p.api->buffer_free(a);
  p.api->buffer_free(b);
  p.api->buffer_free(y);
  return s;
}

// Seconds per cublasGemmEx of the same product (row-major via the
// transpose identity), f32 accumulation, default (tensor-op) algorithm.
double cublas_gemm(cudaDataType_t t, int64_t n, double budget) {
  cublasHandle_t h = nullptr;
  cublas_ok(cublasCreate(&h), "cublasCreate");
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cublas_ok(cublasSetStream(h, stream), "cublasSetStream");
  void *a = nullptr, *b = nullptr, *y = nullptr, *ws = nullptr;
  const size_t bytes = static_cast<size_t>(n * n) * 2;
  cuda_ok(cudaMalloc(&a, bytes), "cudaMalloc");
  cuda_ok(cudaMalloc(&b, bytes), "cudaMalloc");
  cuda_ok(cudaMalloc(&y, bytes), "cudaMalloc");
  cuda_ok(cudaMemset(a, 0x30, bytes), "cudaMemset");
  cuda_ok(cudaMemset(b, 0x30, bytes), "cudaMemset");
  // The same 32 MiB workspace the plugin gives cuBLASLt.
  cuda_ok(cudaMalloc(&ws, 32u << 20), "cudaMalloc");
  cublas_ok(cublasSetWorkspace(h, ws, 32u << 20), "cublasSetWorkspace");
  const float one = 1.0f, zero = 0.0f;
  const int ni = static_cast<int>(n);
  const double s = time_per_call(
      [&] {
        cublas_ok(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, b, t, ni, a, t, ni,
                               &zero, y, t, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
      },
      [&] { cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize"); }, budget);
  cudaFree(a);
  cudaFree(b);
  cudaFree(y);
  cudaFree(ws);
  cublasDestroy(h);
  cudaStreamDestroy(stream);
  return s;
}

// ---------------------------------------------------------------- models

struct ModelRow {
  std::string model, variant;
  double ms = 0;
  int effective_16bit = 0, float_nodes = 0, casts = 0;
};

ModelRow time_model(const ampx::plugins::PluginHost& host, const std::string& model,
                    ampx::AmpLevel level, ampx::DType half, double budget) {
  using namespace ampx;
  const auto& dev = host.device("cuda:0");
  const Graph g = make_builtin_model(model);
  const auto inputs = random_inputs(g, 11);
  AmpPolicy policy;
  policy.level = level;
  policy.half = half;
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(g, policy, caps);
  Executor exec(plan.graph, dev);
  ModelRow r;
  r.model = model;
  r.variant = level == AmpLevel::kO0 ? "O0 f32"
                                     : std::string("O2 ") + (half == DType::kBF16 ? "bf16" : "f16");
  r.effective_16bit = plan.summary.effective_16bit;
  r.float_nodes = plan.summary.float_nodes;
  r.casts = plan.summary.casts;
  r.ms = 1e3 * time_per_call([&] { (void)exec.run(inputs); }, [] {}, budget);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_file, plugin_dir = AMPX_PLUGIN_BUILD_DIR;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out_file = argv[++i];
    } else if (a == "--plugin-dir" && i + 1 < argc) {
      plugin_dir = argv[++i];
    } else if (a == "--quick") {
      quick = true;
    } else {
      std::cerr << "usage: ampx_cuda_bench [--out FILE] [--plugin-dir DIR] [--quick]\n";
      return 64;
    }
  }
  try {
    AbiPlugin plugin(plugin_dir + "/libampx_backend_cuda.so");
    if (plugin.devices() == 0) {
      std::cerr << "ampx_cuda_bench: " << plugin.note() << "\n";
      return 2;
    }
    std::ostringstream md;
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    md << "GPU: " << prop.name << " (sm_" << prop.major << prop.minor << ", "
       << prop.multiProcessorCount << " SMs, " << prop.totalGlobalMem / (1u << 20)
       << " MiB), CUDA driver " << driver << ", runtime " << runtime
       << "; plugin: " << plugin.note() << "\n\n";

    const double budget = quick ? 0.1 : 0.5;
    md << "| GEMM | n | ampx TFLOP/s | cuBLAS TFLOP/s | ampx / cuBLAS | ampx answer |\n"
       << "|---|---:|---:|---:|---:|---|\n";
    for (const auto& [dt, ct, name] : {std::tuple{AMPX_DTYPE_F16, CUDA_R_16F, "f16"},
                                       std::tuple{AMPX_DTYPE_BF16, CUDA_R_16BF, "bf16"}}) {
      for (int64_t n : {int64_t{4096}, int64_t{8192}}) {
        std::string note;
        const double flops = 2.0 * static_cast<double>(n) * n * n;
        const double ta = ampx_gemm(plugin, dt, n, budget, &note);
        const double tc = cublas_gemm(ct, n, budget);
        char row[256];
        std::snprintf(row, sizeof row, "| %s | %lld | %.1f | %.1f | %.3f | %s |\n", name,
                      static_cast<long long>(n), flops / ta / 1e12, flops / tc / 1e12, tc / ta,
                      note.c_str());
        md << row;
        std::cout << row << std::flush;
      }
    }

    ampx::plugins::PluginHostOptions opts;
    opts.extra_dirs = {plugin_dir};
    opts.use_env_path = false;
    opts.use_default_dirs = false;
    const ampx::plugins::PluginHost host(opts);
    md << "\n| model | plan | ms / run | 16-bit nodes | casts | O0 / this |\n"
       << "|---|---|---:|---:|---:|---:|\n";
    for (const char* m : {"cnn", "mlp", "encoder"}) {
      const ModelRow o0 = time_model(host, m, ampx::AmpLevel::kO0, ampx::DType::kF16, budget);
      for (const ModelRow& r :
           {o0, time_model(host, m, ampx::AmpLevel::kO2, ampx::DType::kF16, budget),
            time_model(host, m, ampx::AmpLevel::kO2, ampx::DType::kBF16, budget)}) {
        char row[256];
        std::snprintf(row, sizeof row, "| %s | %s | %.3f | %d / %d | %d | %.2f |\n",
                      r.model.c_str(), r.variant.c_str(), r.ms, r.effective_16bit, r.float_nodes,
                      r.casts, o0.ms / r.ms);
        md << row;
        std::cout << row << std::flush;
      }
    }
    if (!out_file.empty()) std::ofstream(out_file) << md.str();
    std::cout << "\n" << md.str();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ampx_cuda_bench: " << e.what() << "\n";
    return 1;
  }
}
