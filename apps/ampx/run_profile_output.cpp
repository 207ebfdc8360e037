#include "run_profile_output.hpp"

#include "cli_common.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <unordered_map>

#include <unistd.h>

namespace ampx::cli {

namespace {

std::string device_of(const StepTiming& s, const std::vector<std::string>& ids) {
  const auto id = [&](int d) {
    return d >= 0 && static_cast<size_t>(d) < ids.size() ? ids[static_cast<size_t>(d)] : "?";
  };
  return s.copy_from >= 0 ? id(s.copy_from) + "->" + id(s.device) : id(s.device);
}

// Relative error of a prediction against the measurement, as a fraction.
double prediction_error(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured : 0;
}

std::string us_cell(double us) {
  return us < 0 ? "-" : fmt::format("{:.1f}", us);
}

}  // namespace

void check_trace_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError("--trace '" + path + "': is a directory");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError("--trace '" + path + "': no directory '" + dir.string() + "'");
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError("--trace '" + path + "': directory '" + dir.string() + "' is not writable");
}

void print_per_node(std::ostream& out, const ProfileSummary& s,
                    const std::vector<std::string>& device_ids) {
  out << fmt::format("  per node (median of the profiled runs; timing: {}):\n", s.method);
  out << fmt::format("    {:<28} {:<23} {:<12} {:<5} {:>12} {:>12} {:>8} {:>8} {:>10}  {}\n",
                     "node", "op", "device", "dtype", "predicted us", "measured us", "error",
                     "reorders", "reorder us", "implementation");
  for (const StepSummary& st : s.steps) {
    const std::string err =
        st.predicted_us < 0
            ? "-"
            : fmt::format("{:+.0f}%", 100 * prediction_error(st.predicted_us, st.step.us));
    const bool reported = !st.step.implementation.empty();
    out << fmt::format(
        "    {:<28} {:<23} {:<12} {:<5} {:>12} {:>12.1f} {:>8} {:>8} {:>10}  {}\n", st.step.name,
        st.step.op, device_of(st.step, device_ids), st.step.dtype, us_cell(st.predicted_us),
        st.step.us, err, reported ? std::to_string(st.step.reorders) : "-",
        reported ? us_cell(st.step.reorder_us) : "-", reported ? st.step.implementation : "-");
  }
  out << "  per op:\n";
  out << fmt::format("    {:<23} {:>6} {:>12} {:>12} {:>8} {:>10}\n", "op", "steps", "predicted us",
                     "measured us", "reorders", "reorder us");
  for (const OpSummary& op : s.ops)
    out << fmt::format("    {:<23} {:>6} {:>12} {:>12.1f} {:>8} {:>10.1f}\n", op.op, op.steps,
                       op.predicted_steps ? us_cell(op.predicted_us) : "-", op.us, op.reorders,
                       op.reorder_us);
  out << fmt::format("  profiled run total: median {:.3f} ms (each step waited for)\n",
                     s.median_total_us / 1000.0);
}

nlohmann::json per_node_to_json(const ProfileSummary& s,
                                const std::vector<std::string>& device_ids) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepSummary& st : s.steps) {
    nlohmann::json j{{"name", st.step.name},
                     {"op", st.step.op},
                     {"device", device_of(st.step, device_ids)},
                     {"dtype", st.step.dtype},
                     {"shapes", st.step.shapes},
                     {"measured_us", st.step.us},
                     {"min_us", st.min_us},
                     {"max_us", st.max_us},
                     {"timing", timing_method_name(st.step.method)}};
    if (!st.step.implementation.empty()) {
      j["implementation"] = st.step.implementation;
      j["reorders"] = st.step.reorders;
      j["reorder_us"] = st.step.reorder_us;
      j["casts"] = st.step.casts;
    }
    if (st.predicted_us >= 0) {
      j["predicted_us"] = st.predicted_us;
      j["error"] = prediction_error(st.predicted_us, st.step.us);
    }
    steps.push_back(std::move(j));
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const OpSummary& op : s.ops) {
    nlohmann::json j{{"op", op.op},
                     {"steps", op.steps},
                     {"measured_us", op.us},
                     {"reorders", op.reorders},
                     {"reorder_us", op.reorder_us}};
    if (op.predicted_steps) j["predicted_us"] = op.predicted_us;
    ops.push_back(std::move(j));
  }
  return {{"timing", s.method},
          {"median_total_us", s.median_total_us},
          {"steps", std::move(steps)},
          {"ops", std::move(ops)}};
}

}  // namespace ampx::cli
