// Pieces every ampx subcommand shares: the amp-policy options, output format,
// plugin host creation and logging.
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/amp/policy.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_selection.hpp>

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
struct GivenInput {
  std::string spec, name;
  HostTensor tensor;
};
// Reads every array; UsageError for a malformed spec or a repeated name.
std::vector<GivenInput> read_given_inputs(const InputArgs& args);
// `options` plus the shape of every given array for an input --input-shape
// does not name, and the arrays as input values (ONNX models; a built-in
// model has fixed shapes, checked against the arrays in make_inputs).
ModelOptions with_given_inputs(ModelOptions options, std::string_view model,
                               const std::vector<GivenInput>& given);
// Seeded random inputs, replaced by the given arrays, which must match the
// graph input's dtype and shape exactly (UsageError naming the --input).
std::vector<HostTensor> make_inputs(const Graph& graph, uint64_t seed,
                                    std::vector<GivenInput> given);

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

// Options that turn into an AmpPolicy.
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
  // --no-tuned and --profile, for the commands that plan through plan_model
  // (plan, run, export, tune). `train` plans its step through a Session,
  // which neither applies tuned plans nor reads profiles: it does not
  // offer them rather than ignore them.
  void add_stored_plan_sources_to(CLI::App& cmd);
  // The planner options these flags ask for; `cost` from cost_model().
  ampx::PlanOptions plan_options(bool build_graph, capability::CostModel* cost) const {
    return {.build_graph = build_graph,
            .capability_blind = capability_blind,
            .cost = no_cost ? nullptr : cost};
  }

  // Throws UsageError naming the bad argument. With `--dtype auto` the
  // policy holds f16 until resolve_dtype() has seen the device.
  AmpPolicy to_policy() const;
  bool dtype_auto() const { return dtype == "auto"; }
  // Applies `--dtype auto` for `device`; logs the choice. Returns it (or
  // nullopt when the dtype was given).
  std::optional<HalfChoice> resolve_dtype(const Graph& graph, AmpPolicy& policy,
                                          CapabilitySource& device) const;
  // Across the devices of a multi-device plan (placement decides which
  // device's answers count for a node).
  std::optional<HalfChoice> resolve_dtype(const Graph& graph, AmpPolicy& policy,
                                          std::span<const PlanDevice> devices) const;
};

void add_format_option(CLI::App& cmd, Format& format);
// Writes `content` to `path` through a temporary file in the same directory
// and a rename, so readers never see half a file; throws a one-line
// std::runtime_error naming the path.
void setup_logging(const GlobalOptions& opts);
plugins::PluginHost make_plugin_host(const GlobalOptions& opts);
// `--db PATH` as capability::resolve_db_path takes it: nullopt when not given.
inline std::optional<std::string> db_option(const std::string& db) {
  return db.empty() ? std::nullopt : std::optional<std::string>(db);
}
const plugins::Device& find_device(const plugins::PluginHost& host, const std::string& id);

// A device to plan for: a live one, or one described by a stored profile
// (--profile), which can be planned and reported but not run.
struct PlanningDevice {
  std::string id;
  std::string name;
  std::string source;                       // "device" or "profile FILE"
  const plugins::Device* device = nullptr;  // live device, if present here
  std::shared_ptr<CapabilitySource> caps;
  std::shared_ptr<capability::CostModel> cost;  // null with --no-cost
};

// Device `id` as the policy options say: with --profile, its entry in that
// file (answers and costs from it; `need_live` additionally requires the
// device here, for running); else the live device, with costs from its
// probe data in the capability database when there is any (else the
// plugin's hints, and the plan says so).
PlanningDevice planning_device(const plugins::PluginHost& host, const std::string& id,
                               const PolicyOptions& po, bool need_live);
// Every device of the --profile file.
std::vector<PlanningDevice> profile_devices(const PolicyOptions& po);

// `--device LIST|auto`, `--no-fallback`, `--place PATTERN=DEVICE`: the
// devices a plan or run uses (docs/PLACEMENT.md).
struct DeviceArgs {
  std::string device;  // empty: AMPX_DEVICES, else cpu_ref:0
  bool no_fallback = false;
  std::vector<std::string> place;  // PATTERN=DEVICE
  void add_to(CLI::App& cmd);
};

// A model planned on the devices the arguments name: with --profile, the one
// device of the profile (a list is a usage error); else the live selection.
struct PlannedModel {
  DeviceSelection selection;               // live devices (empty with --profile)
  std::optional<PlanningDevice> profiled;  // --profile
  std::optional<HalfChoice> dtype_choice;  // --dtype auto
  AmpPlan plan;
  std::vector<DevicePin> pins;  // --place, resolved against the selection
  // Capability sources and devices by AmpPlan::devices index.
  std::vector<CapabilitySource*> caps() const;
  std::vector<const plugins::Device*> runtime_devices() const;
};
// `need_live`: the plan will run, so --profile only prices. `build_graph`:
// keep AmpPlan::graph. The policy's dtype is resolved in place (--dtype
// auto asks the first listed device). Logs the `auto` ranking (info) and a
// warning naming the nodes that fall back. A tuned plan stored for this
// model (`model`: the MODEL argument), devices and options is applied
// unless --no-tuned, --no-cost, --capability-blind or --profile; the plan
// says so (AmpPlan::tuned).
PlannedModel plan_model(const plugins::PluginHost& host, const Graph& graph,
                        const std::string& model, const DeviceArgs& devices,
                        const PolicyOptions& po, AmpPolicy& policy, bool build_graph,
                        bool need_live);

}  // namespace ampx::cli
