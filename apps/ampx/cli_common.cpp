#include "cli_common.hpp"

#include <unistd.h>
#include <ampx/capability/profile_capabilities.hpp>
#include <ampx/capability/profile_json.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/exec/npy.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/session/plan_on_selection.hpp>
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

ModelOptions with_given_inputs(ModelOptions mo, std::string_view model,
                               const std::vector<GivenInput>& given) {
  if (model.starts_with("builtin:")) return mo;
  for (const GivenInput& g : given) {
    if (mo.input_shapes.emplace(g.name, g.tensor.type.shape).second)
      mo.input_shape_origins[g.name] = "--input " + g.spec;
    // A shape, axes or scales computed from an input at run time are
    // evaluated from its array at import (the plan is built for them).
    mo.input_values[g.name] = g.tensor;
  }
  return mo;
}

std::vector<HostTensor> make_inputs(const Graph& graph, uint64_t seed,
                                    std::vector<GivenInput> given_inputs) {
  auto inputs = random_inputs(graph, seed);
  std::vector<bool> given(inputs.size(), false);
  for (GivenInput& g : given_inputs) {
    const std::string& name = g.name;
    size_t i = 0;
    while (i < inputs.size() && inputs[i].name != name) ++i;
    if (i == inputs.size()) {
      std::string known;
      for (const auto& t : inputs) known += (known.empty() ? "" : ", ") + t.name;
      throw UsageError("--input '" + g.spec + "': the model has no input '" + name +
                       "' (inputs: " + known + ")");
    }
    HostTensor& t = g.tensor;
    if (t.type.dtype != inputs[i].type.dtype || t.type.shape != inputs[i].type.shape)
      throw UsageError(fmt::format("--input '{}': the file holds {}{}, input '{}' is {}{}", g.spec,
                                   dtype_name(t.type.dtype), shape_str(t.type.shape), name,
                                   dtype_name(inputs[i].type.dtype),
                                   shape_str(inputs[i].type.shape)));
    inputs[i] = std::move(t);
    given[i] = true;
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!given_inputs.empty() && !given[i])
      spdlog::info("input '{}' not given: seeded random values", inputs[i].name);
  return inputs;
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

std::optional<HalfChoice> PolicyOptions::resolve_dtype(const Graph& graph, AmpPolicy& policy,
                                                       CapabilitySource& device) const {
  const PlanDevice one[] = {{&device, nullptr, false}};
  return resolve_dtype(graph, policy, one);
}

std::optional<HalfChoice> PolicyOptions::resolve_dtype(const Graph& graph, AmpPolicy& policy,
                                                       std::span<const PlanDevice> devices) const {
  if (!dtype_auto()) return std::nullopt;
  const HalfChoice c = choose_half_dtype(graph, policy, devices);
  policy.half = c.half;
  std::string ids;
  for (const PlanDevice& d : devices) ids += (ids.empty() ? "" : ",") + d.caps->device_id();
  spdlog::info("--dtype auto on {}: {} ({} nodes effectively f16, {} effectively bf16{})", ids,
               dtype_name(c.half), c.f16_effective, c.bf16_effective,
               c.any_native ? "" : "; no native 16-bit kernel: the plan stays f32");
  return c;
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

plugins::PluginHost make_plugin_host(const GlobalOptions& opts) {
  plugins::PluginHostOptions ho;
  for (const auto& d : opts.plugin_dirs) ho.extra_dirs.emplace_back(d);
  ho.excluded_plugins = opts.excluded_plugins;
  ho.log_level = static_cast<int>(spdlog::get_level());
  // Options every plugin gets (each ignores the keys it does not document).
  std::vector<std::string> options;
  if (opts.threads > 0) options.push_back("threads=" + std::to_string(opts.threads));
  if (opts.determinism == "fastest") options.emplace_back("deterministic=0");
  for (const std::string& o : options)
    ho.default_plugin_options += (ho.default_plugin_options.empty() ? "" : ";") + o;
  ho.preflight = !opts.trust_plugins;
  return plugins::PluginHost(std::move(ho));
}

const plugins::Device& find_device(const plugins::PluginHost& host, const std::string& id) {
  try {
    return host.device(id);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--device: ") + e.what());
  }
}

namespace {

PlanningDevice from_profile(capability::DeviceProfile p, const PolicyOptions& po) {
  PlanningDevice d;
  d.id = p.device_id.empty() ? p.fingerprint : p.device_id;
  d.name = p.device_name;
  d.source = "profile " + po.profile;
  auto caps = std::make_shared<capability::ProfileCapabilities>(p);
  if (!po.no_cost) d.cost = capability::make_profile_cost_model(std::move(p), nullptr);
  d.caps = std::move(caps);
  return d;
}

}  // namespace

std::vector<PlanningDevice> profile_devices(const PolicyOptions& po) {
  std::vector<PlanningDevice> out;
  for (auto& p : capability::load_profile_file(po.profile)) out.push_back(from_profile(p, po));
  return out;
}

PlanningDevice planning_device(const plugins::PluginHost& host, const std::string& id,
                               const PolicyOptions& po, bool need_live) {
  if (!po.profile.empty()) {
    const auto profiles = capability::load_profile_file(po.profile);
    auto sel = capability::select_profile(profiles, id);
    if (!sel) {
      std::string have;
      for (const auto& p : profiles) have += (have.empty() ? "" : ", ") + p.device_id;
      throw UsageError("--profile " + po.profile + ": no device '" + id + "' (it has: " + have +
                       ")");
    }
    PlanningDevice d = from_profile(*sel, po);
    d.device = host.find_device(id);
    if (need_live) {
      // Running needs the device itself; the profile then only prices.
      const plugins::Device& live = find_device(host, id);
      d.device = &live;
      d.caps = std::make_shared<DeviceCapabilities>(live);
      if (!po.no_cost)
        d.cost =
            capability::make_profile_cost_model(*sel, capability::make_hint_cost_model(*d.caps));
    }
    return d;
  }
  const plugins::Device& live = find_device(host, id);
  PlanningDevice d;
  d.id = live.id();
  d.name = live.props().name;
  d.source = "device";
  d.device = &live;
  d.caps = std::make_shared<DeviceCapabilities>(live);
  if (!po.no_cost) d.cost = live_cost_model(live, *d.caps, db_option(po.db));
  return d;
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

std::vector<CapabilitySource*> PlannedModel::caps() const {
  std::vector<CapabilitySource*> out;
  if (profiled) {
    out.push_back(profiled->caps.get());
    return out;
  }
  for (const auto& d : selection.devices) out.push_back(d.caps.get());
  return out;
}

std::vector<const plugins::Device*> PlannedModel::runtime_devices() const {
  if (profiled) return {profiled->device};
  return selection.runtime_devices();
}

namespace {

void warn_fallbacks(const AmpPlan& plan) {
  if (plan.summary.fallbacks == 0) return;
  std::string list;
  int shown = 0;
  for (const NodePlan& n : plan.nodes) {
    if (n.placement != PlacementReason::kFallback) continue;
    if (++shown > 5) continue;
    list += (list.empty() ? "" : ", ") + fmt::format("'{}' ({}) on {} [{}]", n.name, op_name(n.op),
                                                     plan.devices[n.device], n.placement_note);
  }
  if (shown > 5) list += fmt::format(", and {} more", shown - 5);
  spdlog::warn("{} of {} nodes fall back from their first-choice device: {}", shown,
               plan.nodes.size(), list);
}

}  // namespace

PlannedModel plan_model(const plugins::PluginHost& host, const Graph& graph,
                        const std::string& model, const DeviceArgs& devices,
                        const PolicyOptions& po, AmpPolicy& policy, bool build_graph,
                        bool need_live) {
  PlannedModel pm;
  std::vector<std::pair<std::string, std::string>> pins;
  for (const std::string& spec : devices.place) {
    const auto eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--place '" + spec + "': expected PATTERN=DEVICE, e.g. 'head*=cpu_ref:0'");
    try {
      validate_override_pattern(spec.substr(0, eq), "--place");
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    pins.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
  }
  if (!po.profile.empty()) {
    // A stored profile describes one device: no placement across devices.
    const std::string id = devices.device.empty() ? std::string(kFallbackDevice) : devices.device;
    if (id == "auto" || id.find(',') != std::string::npos || !pins.empty())
      throw UsageError("--profile plans for one device: give --device ID, without --place");
    pm.profiled = planning_device(host, id, po, need_live);
    CapabilitySource& caps = *pm.profiled->caps;
    pm.dtype_choice = po.resolve_dtype(graph, policy, caps);
    pm.plan = plan_amp(graph, policy, caps, po.plan_options(build_graph, pm.profiled->cost.get()));
    return pm;
  }
  try {
    pm.selection = select_devices(host, graph,
                                  {.spec = devices.device,
                                   .fallback = !devices.no_fallback,
                                   .use_costs = !po.no_cost,
                                   .db_path = db_option(po.db)});
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  for (const std::string& line : pm.selection.ranking) spdlog::info("--device auto: {}", line);
  const auto plan_devices = pm.selection.plan_devices();
  pm.dtype_choice = po.resolve_dtype(graph, policy, plan_devices);
  try {
    pm.pins = pm.selection.pins(pins);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  pm.plan = plan_on_selection(graph, model, policy, pm.selection, pm.pins,
                              po.plan_options(build_graph, nullptr), !po.no_tuned && !po.no_cost,
                              db_option(po.db));
  warn_fallbacks(pm.plan);
  return pm;
}

}  // namespace ampx::cli
