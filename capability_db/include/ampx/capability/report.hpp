// The coverage report: what each amp level really means for a model on each
// device. A plain value filled by `Session::report` (`ampx report`,
// frontend/session/src/report.cpp) and rendered here as text, Markdown, JSON (schema
// "ampx.report/1", docs/cli-json.md) or one self-contained HTML file with charts.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ampx::capability {

// One amp level of one model on one device.
struct LevelRow {
  std::string level;  // "O0".."O3"
  std::string dtype;  // 16-bit type planned with (after --dtype auto)
  int intended_16bit = 0;
  int effective_16bit = 0;
  int kept_fp32_no_native = 0;
  int kept_fp32_cost = 0;
  int casts = 0;                        // per-run Casts (weight Casts are folded at load)
  double predicted_ms = -1;             // < 0: no prediction
  std::optional<double> measured_ms;    // median, when run
  std::optional<double> max_rel_error;  // against O0 f32 on the same device
  std::string error;                    // why this level could not be planned/run
  // A tuned plan (`ampx tune`, `ampx report --tune`) is reported: which one
  // was kept ("tuned", "untuned", "O0"; empty: not tuned), the nodes it
  // keeps f32 by measurement, and its alternating verification against O0.
  std::string tuned;
  int kept_fp32_tuned = 0;
  std::optional<double> verified_ratio_to_o0;
  std::optional<double> noise;
};

struct DeviceSection {
  std::string device_id;  // "onednn:0"
  std::string device_name;
  std::string source;       // "device" or "profile FILE"
  std::string cost_source;  // CostModel::source()
  std::vector<LevelRow> levels;
};

// native / emulated / unsupported node counts for one op, device and dtype.
struct CoverageCell {
  int native = 0, emulated = 0, unsupported = 0;
};

struct CoverageRow {
  std::string op;
  int nodes = 0;  // nodes of this op type in the model
  // For imported models: the source op types behind these nodes where they
  // differ from `op` (ONNX `Squeeze` for a Reshape, `ReduceMean+Sub+...`
  // for a fused LayerNorm), sorted, each once.
  std::vector<std::string> origins;
  // device id -> dtype -> counts
  std::map<std::string, std::map<std::string, CoverageCell>> cells;
};

// One amp level of a model planned across a device list (`ampx report
// --placement vulkan:0,cpu_ref:0`): where the nodes go and what moves.
struct PlacementLevel {
  std::string level;
  std::string dtype;
  std::vector<int> nodes_per_device;  // by PlacementSection::devices
  int effective_16bit = 0;
  int fallbacks = 0;
  int placed_by_cost = 0;
  int copies = 0;  // per run
  uint64_t copy_bytes = 0;
  double predicted_ms = -1;  // kernels and copies; < 0: no prediction
  std::string error;
};

struct PlacementSection {
  std::string spec;                  // the list as given ("vulkan:0,cpu_ref:0", "auto")
  std::vector<std::string> devices;  // resolved, in order (the fallback last)
  std::vector<PlacementLevel> levels;
};

struct ModelReport {
  std::string model;
  int nodes = 0;
  std::vector<DeviceSection> devices;
  std::vector<CoverageRow> coverage;
  std::vector<PlacementSection> placements;
};

struct Report {
  std::string generated_at;  // ISO 8601 UTC
  std::string host;          // CPU model and core count
  bool ran = true;           // false with --no-run
  std::vector<ModelReport> models;
};

inline constexpr const char* kReportSchema = "ampx.report/1";

nlohmann::json report_to_json(const Report& r);
std::string render_text(const Report& r);
std::string render_markdown(const Report& r);
// One file, no network: the data embedded as JSON, charts drawn by inline
// script as SVG (16-bit coverage per level per device; predicted vs
// measured time).
std::string render_html(const Report& r);
// The reports' CSS (the training curves report shares it).
const char* html_report_style();
// Text made safe for HTML element content and attribute values (&, <, >, ").
std::string html_escape(const std::string& s);

}  // namespace ampx::capability
