#include <ampx/plugin_check/plugin_check.hpp>
#include <ampx/plugin_support.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <ostream>
#include <tuple>

namespace ampx::check {
namespace {

// Worse first: a lie, a failure, a pass, unsupported.
int rank(Verdict v) {
  switch (v) {
    case Verdict::kLie:
      return 3;
    case Verdict::kFail:
      return 2;
    case Verdict::kPass:
      return 1;
    default:
      return 0;
  }
}

std::string rate(double amount, double us, const char* unit) {
  if (us <= 0 || amount <= 0) return "-";
  return fmt::format("{:.2f} {}", amount / us / 1e3, unit);
}

}  // namespace

void print_check_text(std::ostream& out, const CheckReport& r, bool perf) {
  out << fmt::format("plugin {} {} (ABI {}.{}) {}\n", r.plugin.empty() ? "?" : r.plugin, r.version,
                     r.abi_major, r.abi_minor, r.file.string());
  if (!r.note.empty()) out << "  note: " << r.note << "\n";
  out << fmt::format("  f16 held to: {} (tolerance {:.3g}; {})\n",
                     opset::compute_mode_name(r.compute_mode),
                     opset::tolerance(AMPX_DTYPE_F16, r.compute_mode),
                     r.compute_mode_source == "plugin"         ? "declared by the plugin"
                     : r.compute_mode_source == "command-line" ? "--compute-mode"
                                                               : "the op set's contract");
  out << "\nABI and error paths:\n";
  for (const AbiCheck& a : r.abi) {
    // A rule newer than the plugin's ABI: what it should do, not a failure.
    const std::string since =
        a.advice ? fmt::format("; not required before {}.{}", r.abi_major, a.since_minor) : "";
    out << fmt::format("  {:<6}  {}{}\n",
                       a.ok       ? "ok"
                       : a.advice ? "advice"
                                  : "FAIL",
                       a.what,
                       a.detail.empty() && since.empty() ? "" : " (" + a.detail + since + ")");
  }
  // One row per device x op x dtype: its worst case.
  std::map<std::tuple<std::string, std::string, ampx_dtype>, std::vector<const CaseResult*>> rows;
  for (const CaseResult& c : r.cases) rows[{c.device, c.op, c.dtype}].push_back(&c);
  if (!rows.empty()) {
    out << fmt::format("\n{:<12}  {:<18}  {:<5}  {:<11}  {:<11}  {:>5}  {:>9}  {:>9}\n", "device",
                       "op", "dtype", "answer", "result", "cases", "worst err", "tolerance");
  }
  for (const auto& [key, cases] : rows) {
    const CaseResult* worst = cases.front();
    for (const CaseResult* c : cases)
      if (rank(c->verdict) > rank(worst->verdict) ||
          (rank(c->verdict) == rank(worst->verdict) && c->error > worst->error))
        worst = c;
    const bool ran = worst->verdict != Verdict::kUnsupported;
    out << fmt::format("{:<12}  {:<18}  {:<5}  {:<11}  {:<11}  {:>5}  {:>9}  {:>9}\n",
                       std::get<0>(key), std::get<1>(key),
                       plugin_support::dtype_name(std::get<2>(key)),
                       plugin_support::support_name(worst->answer), verdict_name(worst->verdict),
                       cases.size(), ran ? fmt::format("{:.2e}", worst->error) : "-",
                       ran ? fmt::format("{:.1e}", worst->tolerance) : "-");
  }
  int pass = 0, fail = 0, lies = 0, unsupported = 0, abi_fail = 0, advice = 0;
  for (const AbiCheck& a : r.abi) {
    abi_fail += !a.ok && !a.advice;
    advice += a.advice;
  }
  bool header = false;
  for (const CaseResult& c : r.cases) {
    pass += c.verdict == Verdict::kPass;
    fail += c.verdict == Verdict::kFail;
    lies += c.verdict == Verdict::kLie;
    unsupported += c.verdict == Verdict::kUnsupported;
    if (c.verdict != Verdict::kFail && c.verdict != Verdict::kLie) continue;
    if (!header) out << "\nfailures:\n";
    header = true;
    out << fmt::format("  {} {} {} ({}, {}): {}; error {:.3e}, tolerance {:.1e}{}\n", c.device,
                       c.name, plugin_support::dtype_name(c.dtype),
                       plugin_support::support_name(c.answer), verdict_name(c.verdict), c.message,
                       c.error, c.tolerance, c.note.empty() ? "" : "; note: " + c.note);
  }
  if (perf) {
    const std::string peer = r.peer.empty() ? "-" : r.peer;
    out << fmt::format(
        "\nperformance (median of 5 launches; the peer: {}):\n{:<12}  {:<34}  {:<5}  {:>14}  "
        "{:>14}  {:>14}  {:>11}  {:>11}  {:>11}\n",
        peer, "device", "case", "dtype", "plugin", "cpu_ref", peer, "plugin", "cpu_ref", peer);
    for (const CaseResult& c : r.cases) {
      if (c.plugin_us < 0) continue;
      out << fmt::format("{:<12}  {:<34}  {:<5}  {:>14}  {:>14}  {:>14}  {:>11}  {:>11}  {:>11}\n",
                         c.device, c.name, plugin_support::dtype_name(c.dtype),
                         rate(c.flops, c.plugin_us, "GFLOP/s"),
                         rate(c.flops, c.reference_us, "GFLOP/s"),
                         rate(c.flops, c.peer_us, "GFLOP/s"), rate(c.bytes, c.plugin_us, "GB/s"),
                         rate(c.bytes, c.reference_us, "GB/s"), rate(c.bytes, c.peer_us, "GB/s"));
    }
  }
  out << fmt::format(
      "\nsummary: {}: {} device(s), {} case runs: {} passed, {} failed, {} lies, {} unsupported; "
      "{} ABI/error-path failures{}: {}\n",
      r.plugin.empty() ? r.file.filename().string() : r.plugin, r.devices,
      pass + fail + lies + unsupported, pass, fail, lies, unsupported, abi_fail,
      advice > 0 ? fmt::format(", {} advice (rules newer than its ABI {}.{})", advice, r.abi_major,
                               r.abi_minor)
                 : "",
      r.ok() ? "PASS" : "FAIL");
  if (r.devices == 0 && abi_fail == 0)
    out << "  no devices here: no case ran (the plugin's note says why)\n";
}

std::string check_json(const CheckReport& r) {
  nlohmann::json abi = nlohmann::json::array(), cases = nlohmann::json::array();
  for (const AbiCheck& a : r.abi) {
    nlohmann::json j{{"check", a.what}, {"ok", a.ok}, {"detail", a.detail}};
    if (a.since_minor > 0) j["since"] = fmt::format("{}.{}", r.abi_major, a.since_minor);
    if (a.advice) j["advice"] = true;
    abi.push_back(std::move(j));
  }
  for (const CaseResult& c : r.cases) {
    nlohmann::json j{{"device", c.device},
                     {"case", c.name},
                     {"op", c.op},
                     {"dtype", plugin_support::dtype_name(c.dtype)},
                     {"answer", plugin_support::support_name(c.answer)},
                     {"note", c.note},
                     {"result", verdict_name(c.verdict)},
                     {"max_rel_error", c.error},
                     {"tolerance", c.tolerance}};
    if (!c.message.empty()) j["message"] = c.message;
    if (c.plugin_us >= 0) {
      j["plugin_us"] = c.plugin_us;
      j["cpu_ref_us"] = c.reference_us;
      if (c.peer_us >= 0) j["peer_us"] = c.peer_us;
      j["flops"] = c.flops;
      j["bytes"] = c.bytes;
    }
    cases.push_back(std::move(j));
  }
  nlohmann::json j{{"schema", "ampx.plugin_check/1"},
                   {"file", r.file.string()},
                   {"plugin", r.plugin},
                   {"version", r.version},
                   {"abi", fmt::format("{}.{}", r.abi_major, r.abi_minor)},
                   {"compute_mode", opset::compute_mode_name(r.compute_mode)},
                   {"compute_mode_source", r.compute_mode_source},
                   {"peer", r.peer},
                   {"devices", r.devices},
                   {"note", r.note},
                   {"ok", r.ok()},
                   {"checks", std::move(abi)},
                   {"cases", std::move(cases)}};
  return j.dump(2) + "\n";
}

}  // namespace ampx::check
