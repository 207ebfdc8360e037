#include <ampx/capability/report.hpp>

namespace ampx::capability {

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json level_json(const LevelRow& l, double o0_pred, std::optional<double> o0_meas) {
  nlohmann::json j{{"level", l.level},
                   {"dtype", l.dtype},
                   {"intended_16bit", l.intended_16bit},
                   {"effective_16bit", l.effective_16bit},
                   {"kept_fp32_no_native_kernel", l.kept_fp32_no_native},
                   {"kept_fp32_cost", l.kept_fp32_cost},
                   {"casts", l.casts},
                   {"predicted_ms",
                    l.predicted_ms >= 0 ? nlohmann::json(l.predicted_ms) : nlohmann::json(nullptr)},
                   {"predicted_ratio_to_o0", nullptr},
                   {"measured_ms", opt(l.measured_ms)},
                   {"measured_ratio_to_o0", nullptr},
                   {"max_rel_error", opt(l.max_rel_error)}};
  if (l.predicted_ms >= 0 && o0_pred > 0) j["predicted_ratio_to_o0"] = l.predicted_ms / o0_pred;
  if (l.measured_ms && o0_meas && *o0_meas > 0)
    j["measured_ratio_to_o0"] = *l.measured_ms / *o0_meas;
  if (!l.error.empty()) j["error"] = l.error;
  if (!l.tuned.empty())
    j["tuned"] = {{"kept", l.tuned},
                  {"kept_fp32_tuned", l.kept_fp32_tuned},
                  {"verified_ratio_to_o0", opt(l.verified_ratio_to_o0)},
                  {"noise", opt(l.noise)}};
  return j;
}

}  // namespace

nlohmann::json report_to_json(const Report& r) {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelReport& m : r.models) {
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceSection& d : m.devices) {
      double o0_pred = -1;
      std::optional<double> o0_meas;
      for (const LevelRow& l : d.levels)
        if (l.level == "O0") {
          o0_pred = l.predicted_ms;
          o0_meas = l.measured_ms;
        }
      nlohmann::json levels = nlohmann::json::array();
      for (const LevelRow& l : d.levels) levels.push_back(level_json(l, o0_pred, o0_meas));
      devices.push_back({{"device", d.device_id},
                         {"name", d.device_name},
                         {"source", d.source},
                         {"cost_source", d.cost_source},
                         {"levels", std::move(levels)}});
    }
    nlohmann::json coverage = nlohmann::json::array();
    for (const CoverageRow& c : m.coverage) {
      nlohmann::json cells = nlohmann::json::object();
      for (const auto& [dev, by_dtype] : c.cells)
        for (const auto& [dt, cell] : by_dtype)
          cells[dev][dt] = {{"native", cell.native},
                            {"emulated", cell.emulated},
                            {"unsupported", cell.unsupported}};
      nlohmann::json row{{"op", c.op}, {"nodes", c.nodes}, {"cells", std::move(cells)}};
      if (!c.origins.empty()) row["origins"] = c.origins;
      coverage.push_back(std::move(row));
    }
    nlohmann::json placements = nlohmann::json::array();
    for (const PlacementSection& p : m.placements) {
      nlohmann::json levels = nlohmann::json::array();
      for (const PlacementLevel& l : p.levels) {
        nlohmann::json j{{"level", l.level}, {"dtype", l.dtype}};
        if (!l.error.empty()) {
          j["error"] = l.error;
        } else {
          nlohmann::json per = nlohmann::json::object();
          for (size_t i = 0; i < p.devices.size() && i < l.nodes_per_device.size(); ++i)
            per[p.devices[i]] = l.nodes_per_device[i];
          j.update({{"nodes_per_device", std::move(per)},
                    {"effective_16bit", l.effective_16bit},
                    {"fallbacks", l.fallbacks},
                    {"placed_by_cost", l.placed_by_cost},
                    {"copies", l.copies},
                    {"copy_bytes", l.copy_bytes},
                    {"predicted_ms", l.predicted_ms >= 0 ? nlohmann::json(l.predicted_ms)
                                                         : nlohmann::json(nullptr)}});
        }
        levels.push_back(std::move(j));
      }
      placements.push_back(
          {{"spec", p.spec}, {"devices", p.devices}, {"levels", std::move(levels)}});
    }
    models.push_back({{"model", m.model},
                      {"nodes", m.nodes},
                      {"devices", std::move(devices)},
                      {"coverage", std::move(coverage)},
                      {"placements", std::move(placements)}});
  }
  return {{"schema", kReportSchema},
          {"generated_at", r.generated_at},
          {"host", r.host},
          {"ran", r.ran},
          {"models", std::move(models)}};
}

}  // namespace ampx::capability
