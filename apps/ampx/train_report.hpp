// `ampx train --report FILE.html`: the training curves as one self-contained
// HTML file (docs/TRAINING.md, "Curves report"). Each run is a series under
// its label; running again with the same file adds the run beside the
// others (or, with the same label, replaces it, keeping the steps before a
// resume), so O0, O2 and O3 runs, with and without loss scaling, end up in
// one set of plots: the loss per step, the loss scale over time, where
// steps were skipped, and the accuracy per epoch.
#pragma once

#include <ampx/session/trainer.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace ampx::cli {

// One run's series, filled epoch by epoch.
class TrainCurves {
 public:
  TrainCurves(std::string label, std::string model, std::string devices);
  void add_epoch(const train::EpochResult& r, const std::optional<train::Evaluation>& ev);
  // With --diagnose-overflow: the layers whose gradients underflowed most
  // and the ones named at overflows, as the table shows them.
  void set_diagnostics(const train::OverflowDiagnostics& d);
  nlohmann::json to_json() const;

 private:
  nlohmann::json run_;
};

// Adds `run` to the report at `path` and writes it atomically. An existing
// file that is not an ampx training report is refused
// (std::runtime_error naming it), never overwritten.
void write_train_report(const std::filesystem::path& path, const nlohmann::json& run);

// The file can be written (its directory exists): UsageError otherwise,
// before any training.
void check_report_path(const std::string& path);

}  // namespace ampx::cli
