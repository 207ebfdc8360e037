// Tables shared by the text, Markdown and HTML forms of the report.
#pragma once

#include <ampx/capability/report.hpp>

#include <fmt/format.h>

#include <algorithm>

#include <string>
#include <vector>

namespace ampx::capability::report_detail {

using Table = std::vector<std::vector<std::string>>;  // first row: header

inline std::string ms(double v) {
  return v < 0 ? "—" : v < 10 ? fmt::format("{:.2f} ms", v) : fmt::format("{:.1f} ms", v);
}
inline std::string ms(const std::optional<double>& v) {
  return v ? ms(*v) : "—";
}
inline std::string ratio(double v, double base) {
  return v >= 0 && base > 0 ? fmt::format("{:.2f}", v / base) : "—";
}

inline std::string cell_str(const CoverageCell& c) {
  std::vector<std::string> parts;
  if (c.native) parts.push_back(fmt::format("{} native", c.native));
  if (c.emulated) parts.push_back(fmt::format("{} emulated", c.emulated));
  if (c.unsupported) parts.push_back(fmt::format("{} unsupported", c.unsupported));
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s.empty() ? "—" : s;
}

inline Table level_table(const DeviceSection& d, bool ran) {
  Table t{{"level", "dtype", "16-bit intended", "16-bit effective", "f32: no native kernel",
           "f32: cost", "casts", "predicted", "ratio"}};
  if (ran) {
    for (const char* h : {"measured", "ratio", "max rel. error"}) t[0].push_back(h);
  }
  // Columns for tuned plans only where some level has one.
  const bool tuned = std::any_of(d.levels.begin(), d.levels.end(),
                                 [](const LevelRow& l) { return !l.tuned.empty(); });
  if (tuned)
    for (const char* h : {"tuned plan", "f32: tuned", "verified vs O0"}) t[0].push_back(h);
  double o0p = -1;
  std::optional<double> o0m;
  for (const auto& l : d.levels)
    if (l.level == "O0") {
      o0p = l.predicted_ms;
      o0m = l.measured_ms;
    }
  for (const auto& l : d.levels) {
    if (!l.error.empty()) {
      std::vector<std::string> row{l.level, l.dtype, "error: " + l.error};
      row.resize(t[0].size());
      t.push_back(std::move(row));
      continue;
    }
    std::vector<std::string> row{l.level,
                                 l.dtype,
                                 std::to_string(l.intended_16bit),
                                 std::to_string(l.effective_16bit),
                                 std::to_string(l.kept_fp32_no_native),
                                 std::to_string(l.kept_fp32_cost),
                                 std::to_string(l.casts),
                                 ms(l.predicted_ms),
                                 ratio(l.predicted_ms, o0p)};
    if (ran) {
      row.push_back(ms(l.measured_ms));
      row.push_back(l.measured_ms && o0m ? ratio(*l.measured_ms, *o0m) : "—");
      row.push_back(l.max_rel_error ? fmt::format("{:.1e}", *l.max_rel_error) : "—");
    }
    if (tuned) {
      row.push_back(l.tuned.empty() ? "—" : "kept " + l.tuned);
      row.push_back(l.tuned.empty() ? "—" : std::to_string(l.kept_fp32_tuned));
      row.push_back(l.verified_ratio_to_o0
                        ? fmt::format("{:.2f}x ± {:.0f} %", *l.verified_ratio_to_o0,
                                      100 * l.noise.value_or(0))
                        : "—");
    }
    t.push_back(std::move(row));
  }
  return t;
}

// Nodes per device, fallbacks and copies per amp level, for one device list.
inline Table placement_table(const PlacementSection& p) {
  Table t{{"level", "dtype"}};
  for (const auto& d : p.devices) t[0].push_back("on " + d);
  for (const char* h :
       {"fallbacks", "by cost", "16-bit effective", "copies/run", "KiB/run", "predicted"})
    t[0].push_back(h);
  for (const auto& l : p.levels) {
    std::vector<std::string> row{l.level, l.dtype};
    if (!l.error.empty()) {
      row.push_back("error: " + l.error);
      row.resize(t[0].size());
      t.push_back(std::move(row));
      continue;
    }
    for (size_t i = 0; i < p.devices.size(); ++i)
      row.push_back(i < l.nodes_per_device.size() ? std::to_string(l.nodes_per_device[i]) : "0");
    row.push_back(std::to_string(l.fallbacks));
    row.push_back(std::to_string(l.placed_by_cost));
    row.push_back(std::to_string(l.effective_16bit));
    row.push_back(std::to_string(l.copies));
    row.push_back(fmt::format("{:.1f}", static_cast<double>(l.copy_bytes) / 1024.0));
    row.push_back(ms(l.predicted_ms));
    t.push_back(std::move(row));
  }
  return t;
}

inline Table coverage_table(const ModelReport& m) {
  Table t{{"op", "nodes"}};
  std::vector<std::pair<std::string, std::string>> cols;  // device, dtype
  for (const auto& d : m.devices)
    for (const char* dt : {"f32", "f16", "bf16"}) {
      cols.emplace_back(d.device_id, dt);
      t[0].push_back(d.device_id + " " + dt);
    }
  for (const auto& c : m.coverage) {
    std::string label = c.op;
    for (size_t i = 0; i < c.origins.size(); ++i)
      label += (i == 0 ? " (from " : ", ") + c.origins[i] + (i + 1 == c.origins.size() ? ")" : "");
    std::vector<std::string> row{label, std::to_string(c.nodes)};
    for (const auto& [dev, dt] : cols) {
      const auto di = c.cells.find(dev);
      const CoverageCell* cell = nullptr;
      if (di != c.cells.end())
        if (auto it = di->second.find(dt); it != di->second.end()) cell = &it->second;
      row.push_back(cell ? cell_str(*cell) : "—");
    }
    t.push_back(std::move(row));
  }
  return t;
}

}  // namespace ampx::capability::report_detail
