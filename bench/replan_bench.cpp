// The cost of a re-plan (Session::load_shape_cached, docs/SESSION.md): an
// ONNX model with a symbolic batch run at batches 1, 2, 4 and 8, twice
// over. The first run at a batch imports, plans and compiles (a cache
// miss); the second finds the compiled plan. Printed per device: the
// re-plan time and a cached run's time at each batch.
//
// Usage: ampx_replan_bench [MODEL.onnx] [DEVICE...]   (default: builtin:cnn
// written with a symbolic batch; cpu_ref:0 and onednn:0)
#include <ampx/exec/host_tensor.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/onnx/onnx_export.hpp>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/session/session.hpp>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_timing.hpp"

using namespace ampx;

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  namespace fs = std::filesystem;
  std::string model = argc > 1 ? argv[1] : "";
  std::vector<std::string> devices;
  for (int i = 2; i < argc; ++i) devices.emplace_back(argv[i]);
  if (devices.empty()) devices = {"cpu_ref:0", "onednn:0"};
  fs::path written;
  if (model.empty()) {
    written = fs::temp_directory_path() / "ampx_replan_bench_cnn.onnx";
    onnx_io::ExportOptions eo;
    eo.batch_dim = "N";
    fileio::write_file_atomically(written, onnx_io::export_onnx(make_builtin_model("cnn"), eo));
    model = written.string();
  }
  std::printf("%s\n| device | batch | re-plan ms (import + plan + compile) | cached run ms |\n",
              model.c_str());
  std::printf("|---|---|---|---|\n");
  for (const std::string& dev : devices) {
    Session session({.devices = dev, .use_tuned = false});
    AmpPolicy policy;
    policy.level = AmpLevel::kO2;
    ShapeCachedModel m = session.load_shape_cached(model, {.policy = policy}, {}, {.capacity = 8});
    for (int64_t batch : {1, 2, 4, 8}) {
      onnx_io::ImportOptions io;
      io.batch_size = batch;
      const auto inputs = random_inputs(onnx_io::import_onnx(model, io), 1);
      (void)m.run(inputs);  // the miss
      const double replan = m.stats().last_plan_ms;
      std::vector<double> runs;
      for (int r = 0; r < 5; ++r) {
        const auto t0 = bench::Clock::now();
        (void)m.run(inputs);
        runs.push_back(bench::ms_since(t0));
      }
      std::printf("| %s | %lld | %.1f | %.2f |\n", dev.c_str(), static_cast<long long>(batch),
                  replan, bench::median(runs));
    }
  }
  if (!written.empty()) fs::remove(written);
  return 0;
}
