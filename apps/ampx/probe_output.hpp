// What `ampx probe` and Python's `Session.probe` say about a probe run: one
// row per device and the document (schema ampx.probe/1, docs/cli-json.md),
// the summary table, the bar's closing words, and the check of the op list.
// One writer, so the two shells cannot drift apart.
#pragma once

#include <ampx/capability/profile.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::cli {

// One device's result.
struct ProbeDeviceResult {
  std::string device;
  std::string fingerprint;  // empty when nothing was stored
  int measured = 0, native = 0, emulated = 0, unsupported = 0;
  double seconds = 0;
  bool stored = false;
  std::string outcome;  // "stored", "crashed: SIGSEGV", "timed out after 5 s", ...
};

// The counts and fingerprint of `profile` (measured: timings with a kernel
// time; native / emulated / unsupported: the device's answers).
void count_profile(const capability::DeviceProfile& profile, ProbeDeviceResult& result);

// The progress bar's last words for the device: "stored (N timings, S s)",
// else the outcome.
std::string probe_finish_text(const ProbeDeviceResult& result);

// `ampx probe --format json` (schema ampx.probe/1).
nlohmann::json probe_json(std::span<const ProbeDeviceResult> results,
                          const std::filesystem::path& db, bool quick);

// `ampx probe`'s summary table and the database line.
std::string probe_table(std::span<const ProbeDeviceResult> results,
                        const std::filesystem::path& db);

// std::invalid_argument naming `option` for an entry of `ops` that is not an
// op of the op set (docs/OPS.md): a misspelt op would otherwise measure
// nothing and store an empty profile over the device's.
void check_probe_ops(std::span<const std::string> ops, std::string_view option);

}  // namespace ampx::cli
