#include "cli_common.hpp"

#include <unistd.h>
#include <ampx/exec/npy.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace ampx::cli {

void ModelArgs::add_to(CLI::App& cmd) {
  cmd.add_option("--input-shape", input_shapes,
                 "NAME=DIMS (e.g. input=1x3x224x224): shape of an ONNX graph input with "
                 "symbolic dimensions; repeatable")
      ->take_all();
  cmd.add_option("--max-tensor-bytes", max_tensor_bytes,
                 "the largest single tensor an ONNX model may have (e.g. 4GiB, 512MiB); "
                 "default 16 GiB or the machine's memory if less, at most 16 GiB")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(uint64_t{1}, uint64_t{16} << 30));
}

ModelOptions ModelArgs::to_options() const {
  ModelOptions o;
  o.max_tensor_bytes = max_tensor_bytes;
  for (const std::string& spec : input_shapes) {
    const auto eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--input-shape '" + spec + "': expected NAME=DIMS, e.g. input=1x3x224x224");
    try {
      o.input_shapes[spec.substr(0, eq)] = parse_shape(spec.substr(eq + 1));
    } catch (const std::invalid_argument& e) {
      throw UsageError("--input-shape '" + spec + "': " + e.what());
    }
  }
  return o;
}

void InputArgs::add_to(CLI::App& cmd) {
  cmd.add_option("--input", specs,
                 "NAME=FILE.npy: a graph input from a NumPy file (repeatable; the others are "
                 "seeded random)")
      ->take_all();
}

std::vector<GivenInput> read_given_inputs(const InputArgs& args) {
  std::vector<GivenInput> given;
  for (const std::string& spec : args.specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--input '" + spec + "': expected NAME=FILE.npy");
    const std::string name = spec.substr(0, eq);
    for (const GivenInput& g : given)
      if (g.name == name) throw UsageError("--input: '" + name + "' is given twice");
    HostTensor t = read_npy(spec.substr(eq + 1));
    t.name = name;
    given.push_back({spec, name, std::move(t)});
  }
  return given;
}

void MemoryArgs::add_to(CLI::App& cmd) {
  cmd.add_option("--max-memory", max_memory,
                 "refuse a plan that needs more memory than SIZE (e.g. 8G, 512MiB) in all: every "
                 "device's arena, weights and state, copies' staging and the input and output "
                 "tensors; each device's own memory is always checked")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max()));
}

void PolicyOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--amp", amp, "amp level: O0, O1, O2, O3 or auto")->capture_default_str();
  cmd.add_option(
         "--dtype", dtype,
         "16-bit type: f16, bf16 or auto (what the device runs natively, see docs/PLANNER.md)")
      ->capture_default_str();
  cmd.add_option("--keep-fp32", keep_fp32, "node name or prefix* to keep in f32 (repeatable)")
      ->take_all();
  cmd.add_option("--force-16bit", force_16bit, "node name or prefix* to force to 16-bit")
      ->take_all();
  cmd.add_option("--white-list", white_list, "comma-separated ops replacing the white list")
      ->each([this](const std::string&) { white_list_set = true; });
  cmd.add_option("--black-list", black_list, "comma-separated ops replacing the black list")
      ->each([this](const std::string&) { black_list_set = true; });
  cmd.add_flag("--no-cost", no_cost,
               "no cost step: every node the device runs natively in 16-bit stays 16-bit");
  cmd.add_option("--db", db,
                 "capability database with probe data (default: see docs/capability-db.md)");
  cmd.add_flag("--capability-blind", capability_blind,
               "plan as a policy-string framework would: 16-bit nodes run 16-bit on emulated "
               "kernels too (for comparisons; see docs/PLANNER.md)");
}

void PolicyOptions::add_stored_plan_sources_to(CLI::App& cmd) {
  cmd.add_flag("--no-tuned", no_tuned,
               "plan afresh even where `ampx tune` stored a tuned plan for this model, device and "
               "options");
  cmd.add_option("--profile", profile,
                 "plan from a stored profile (ampx db export) instead of the live device");
}

AmpPolicy PolicyOptions::to_policy() const {
  AmpPolicy p;
  try {
    p.level = parse_amp_level(amp);
    const auto d = dtype_auto() ? std::optional<DType>(DType::kF16) : parse_dtype(dtype);
    if (!d || !is_16bit_float(*d))
      throw UsageError("--dtype '" + dtype + "': expected f16, bf16 or auto");
    p.half = *d;
    if (white_list_set) p.white_list = parse_op_list(white_list, "--white-list");
    if (black_list_set) p.black_list = parse_op_list(black_list, "--black-list");
    for (const auto& name : keep_fp32) {
      validate_override_pattern(name, "--keep-fp32");
      p.overrides.push_back({name, false});
    }
    for (const auto& name : force_16bit) {
      validate_override_pattern(name, "--force-16bit");
      p.overrides.push_back({name, true});
    }
  } catch (const UsageError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return p;
}

void PolicyOptions::apply_to(SessionOptions& options) const {
  options.db_path = db_option(db);
  options.use_costs = !no_cost;
  options.use_tuned = !no_tuned;
}

PlanRequest PolicyOptions::plan_request(const std::string& model, const DeviceArgs& devices,
                                        PlanPurpose purpose) const {
  PlanRequest r;
  r.policy = to_policy();
  r.half = half();
  for (const std::string& spec : devices.place) {
    const auto eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--place '" + spec + "': expected PATTERN=DEVICE, e.g. 'head*=cpu_ref:0'");
    try {
      validate_override_pattern(spec.substr(0, eq), "--place");
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    r.pins.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
  }
  if (!profile.empty()) r.profile = std::filesystem::path(profile);
  r.tuned = no_tuned ? TunedPlans::kIgnore : TunedPlans::kUse;
  r.capabilities = capability_blind ? CapabilityUse::kBlind : CapabilityUse::kAware;
  r.costs = no_cost ? CostUse::kNone : CostUse::kModel;
  r.fallback = devices.no_fallback ? Fallback::kRefuse : Fallback::kToReference;
  r.purpose = purpose;
  r.model_key = model;
  return r;
}

void add_format_option(CLI::App& cmd, Format& format) {
  cmd.add_option_function<std::string>(
         "--format",
         [&format](const std::string& s) { format = s == "json" ? Format::kJson : Format::kText; },
         "output format: text or json")
      ->check(one_of({"text", "json"}));
}

void setup_logging(const GlobalOptions& opts) {
  // Logs go to stderr so that --format json on stdout stays machine-readable.
  auto logger = spdlog::stderr_color_mt("ampx");
  logger->set_pattern("ampx: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  if (opts.verbose) spdlog::set_level(spdlog::level::debug);
  if (!opts.log_level.empty()) {
    const auto lvl = spdlog::level::from_str(opts.log_level);
    if (lvl == spdlog::level::off && opts.log_level != "off")
      throw UsageError("--log-level '" + opts.log_level +
                       "': expected trace, debug, info, warn, error, critical or off");
    spdlog::set_level(lvl);
  }
}

SessionOptions session_options(const GlobalOptions& opts) {
  SessionOptions so;
  for (const auto& d : opts.plugin_dirs) so.plugin_dirs.emplace_back(d);
  so.excluded_plugins = opts.excluded_plugins;
  so.threads = opts.threads;
  so.determinism =
      opts.determinism == "fastest" ? Determinism::kFastest : Determinism::kThreadCountFree;
  so.trust_plugins = opts.trust_plugins;
  so.log_level = static_cast<int>(spdlog::get_level());
  return so;
}

const plugins::Device& find_device(const plugins::PluginHost& host, const std::string& id) {
  try {
    return host.device(id);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--device: ") + e.what());
  }
}

void DeviceArgs::add_to(CLI::App& cmd) {
  cmd.add_option("--device", device,
                 "devices in preference order (vulkan:0,onednn:0) or auto; default: "
                 "$AMPX_DEVICES, else cpu_ref:0")
      ->check(kNonEmpty);
  cmd.add_flag("--no-fallback", no_fallback,
               "no last resort on cpu_ref:0: a node the listed devices cannot run is an error "
               "(all such nodes are listed)");
  cmd.add_option("--place", place,
                 "PATTERN=DEVICE: run the nodes a name or prefix* matches on DEVICE (repeatable)")
      ->take_all();
}

}  // namespace ampx::cli
