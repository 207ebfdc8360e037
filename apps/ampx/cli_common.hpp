// Pieces every ampx subcommand shares: argument parsing (the amp-policy,
// device and model options, turned into SessionOptions and a PlanRequest),
// output format and logging. The work itself is the Session's.
#pragma once

#include <ampx/amp/policy.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/session/given_inputs.hpp>
#include <ampx/session/session.hpp>

#include <charconv>
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampx::cli {

// For options whose value names something (a device, a file): an empty
// value is a usage error, not "the default".
inline const CLI::Validator kNonEmpty(
    [](std::string& s) { return s.empty() ? std::string("must not be empty") : std::string(); },
    "NON-EMPTY");

// For options that take one of a few words: "'yaml' is not one of text,
// json" instead of CLI11's "Check yaml value in {...} FAILED".
inline CLI::Validator one_of(std::vector<std::string> words) {
  std::string list;
  for (const std::string& w : words) list += (list.empty() ? "" : ", ") + w;
  return CLI::Validator(
      [words = std::move(words), list](std::string& s) {
        for (const std::string& w : words)
          if (s == w) return std::string();
        return "'" + s + "' is not one of " + list;
      },
      "{" + list + "}");
}

// For options that name a directory to search (--plugin-dir): it must
// exist and be one; a typo would otherwise be searched silently.
inline const CLI::Validator kExistingDirectory(
    [](std::string& s) {
      std::error_code ec;
      if (std::filesystem::is_directory(s, ec)) return std::string();
      if (!std::filesystem::exists(s, ec)) return "'" + s + "' does not exist";
      return "'" + s + "' is not a directory";
    },
    "DIR");

// For unsigned 64-bit options (--seed): digits only, at most 2^64 - 1.
// CLI11's own parse saturates 18446744073709551616 to the maximum, and its
// NonNegativeNumber prints the range of a double (300 digits).
inline const CLI::Validator kUnsigned64(
    [](std::string& s) {
      uint64_t v = 0;
      const char* end = s.data() + s.size();
      const auto [at, ec] = std::from_chars(s.data(), end, v);
      if (s.empty() || ec != std::errc() || at != end)
        return "'" + s + "' is not an integer from 0 to 18446744073709551615";
      return std::string();
    },
    "UINT64");

// A bad argument: printed as one line, exit code 2.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class Format { kText, kJson };

struct GlobalOptions {
  bool verbose = false;
  std::string log_level;
  std::vector<std::string> plugin_dirs;
  std::vector<std::string> excluded_plugins;  // --exclude-plugin NAME (repeatable)
  int threads = 0;                            // 0: each plugin's default (all cores)
  bool trust_plugins = false;                 // --trust-plugins: no pre-flight child
  // --determinism: "thread-count-free" (the default: docs/OPS.md's promise)
  // or "fastest" (passed to plugins as deterministic=0)
  std::string determinism = "thread-count-free";
};

// Options of a MODEL argument: `--input-shape NAME=DIMS`, repeatable, pins
// an ONNX input's symbolic dimensions.
struct ModelArgs {
  std::vector<std::string> input_shapes;
  uint64_t max_tensor_bytes = 0;  // 0: the default
  void add_to(CLI::App& cmd);
  ModelOptions to_options() const;  // UsageError on a malformed value
};

// `--input NAME=FILE.npy` (repeatable): a graph input from a NumPy file.
// The arrays are read before the model: their shapes pin the model's
// symbolic dimensions, and a shape, axes or scales the model computes from
// an input are evaluated from its array at import (docs/ONNX.md).
struct InputArgs {
  std::vector<std::string> specs;
  void add_to(CLI::App& cmd);
};
// Reads every array; UsageError for a malformed spec or a repeated name
// (with_given_inputs and make_inputs: ampx/session/given_inputs.hpp).
std::vector<GivenInput> read_given_inputs(const InputArgs& args);

// `--max-memory SIZE`: what a plan that runs may take in all, devices and
// host tensors together (exec/memory_budget.hpp); each device's own memory
// is always checked.
struct MemoryArgs {
  uint64_t max_memory = 0;  // 0: no limit but the devices'
  void add_to(CLI::App& cmd);
  // `host_bytes`: host memory the command holds beside the plan.
  MemoryLimit limit(uint64_t host_bytes = 0) const {
    return {.max_bytes = max_memory, .origin = "--max-memory", .host_bytes = host_bytes};
  }
};

struct DeviceArgs;

// Options that turn into an AmpPolicy and a PlanRequest.
struct PolicyOptions {
  std::string amp = "O0";
  std::string dtype = "f16";
  std::vector<std::string> keep_fp32;
  std::vector<std::string> force_16bit;
  std::string white_list;
  std::string black_list;
  bool white_list_set = false;
  bool black_list_set = false;
  bool capability_blind = false;
  bool no_cost = false;
  bool no_tuned = false;  // --no-tuned: ignore a stored tuned plan (ampx tune)
  std::string profile;    // --profile FILE.json: answers and costs from a stored profile
  std::string db;         // --db PATH: the capability database for probe data

  void add_to(CLI::App& cmd);
  // --no-tuned and --profile, for the commands that plan through
  // Session::plan (plan, run, export). `train` plans its step through the
  // Trainer, which neither applies tuned plans nor reads profiles: it does
  // not offer them rather than ignore them.
  void add_stored_plan_sources_to(CLI::App& cmd);

  // Throws UsageError naming the bad argument. With `--dtype auto` the
  // policy holds f16 (HalfDType::kAuto in the request resolves it).
  AmpPolicy to_policy() const;
  bool dtype_auto() const { return dtype == "auto"; }
  HalfDType half() const { return dtype_auto() ? HalfDType::kAuto : HalfDType::kPolicy; }
  // --db, --no-cost and --no-tuned, the session's.
  void apply_to(SessionOptions& options) const;
  // Everything a plan of MODEL depends on: these flags, and the --place
  // pins and --no-fallback of `devices` (UsageError for a malformed pin).
  PlanRequest plan_request(const std::string& model, const DeviceArgs& devices,
                           PlanPurpose purpose) const;
};

void add_format_option(CLI::App& cmd, Format& format);
void setup_logging(const GlobalOptions& opts);
// The Session's options the global flags set (plugin directories and
// exclusions, threads, determinism, trust, the log level plugins get).
SessionOptions session_options(const GlobalOptions& opts);
// `--db PATH` as capability::resolve_db_path takes it: nullopt when not given.
inline std::optional<std::string> db_option(const std::string& db) {
  return db.empty() ? std::nullopt : std::optional<std::string>(db);
}
const plugins::Device& find_device(const plugins::PluginHost& host, const std::string& id);

// `--device LIST|auto`, `--no-fallback`, `--place PATTERN=DEVICE`: the
// devices a plan or run uses (docs/PLACEMENT.md).
struct DeviceArgs {
  std::string device;  // empty: AMPX_DEVICES, else cpu_ref:0
  bool no_fallback = false;
  std::vector<std::string> place;  // PATTERN=DEVICE
  void add_to(CLI::App& cmd);
  // --device and --no-fallback, the session's.
  void apply_to(SessionOptions& options) const {
    options.devices = device;
    options.fallback = !no_fallback;
  }
};

}  // namespace ampx::cli
