#include "probe_output.hpp"

#include <ampx/opset/catalogue.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace ampx::cli {

void count_profile(const capability::DeviceProfile& profile, ProbeDeviceResult& result) {
  for (const auto& t : profile.ops) {
    result.measured += t.time_us >= 0;
    result.native += t.support == AMPX_SUPPORT_NATIVE;
    result.emulated += t.support == AMPX_SUPPORT_EMULATED;
    result.unsupported += t.support == AMPX_SUPPORT_UNSUPPORTED;
  }
  result.fingerprint = profile.fingerprint;
}

std::string probe_finish_text(const ProbeDeviceResult& result) {
  return result.stored
             ? fmt::format("stored ({} timings, {:.1f} s)", result.measured, result.seconds)
             : result.outcome;
}

nlohmann::json probe_json(std::span<const ProbeDeviceResult> results,
                          const std::filesystem::path& db, bool quick) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results)
    rows.push_back({{"device", r.device},
                    {"fingerprint", r.fingerprint},
                    {"measured", r.measured},
                    {"native", r.native},
                    {"emulated", r.emulated},
                    {"unsupported", r.unsupported},
                    {"seconds", r.seconds},
                    {"stored", r.stored},
                    {"outcome", r.outcome}});
  return {{"schema", "ampx.probe/1"}, {"db", db.string()}, {"quick", quick}, {"devices", rows}};
}

std::string probe_table(std::span<const ProbeDeviceResult> results,
                        const std::filesystem::path& db) {
  std::string out = fmt::format("{:<16} {:>8} {:>7} {:>9} {:>12} {:>8}  {}\n", "device", "measured",
                                "native", "emulated", "unsupported", "time", "result");
  for (const auto& r : results)
    out += fmt::format("{:<16} {:>8} {:>7} {:>9} {:>12} {:>7.1f}s  {}\n", r.device, r.measured,
                       r.native, r.emulated, r.unsupported, r.seconds, r.outcome);
  out += fmt::format("database: {}\n", db.string());
  return out;
}

void check_probe_ops(std::span<const std::string> ops, std::string_view option) {
  for (const std::string& op : ops)
    if (opset::find_op(op) == nullptr)
      throw std::invalid_argument(
          fmt::format("{} '{}': not an op of the op set (docs/OPS.md)", option, op));
}

}  // namespace ampx::cli
