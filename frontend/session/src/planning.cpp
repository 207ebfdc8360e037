// Session::plan(graph, request): the one planning path (docs/SESSION.md).
#include <ampx/capability/profile_capabilities.hpp>
#include <ampx/capability/profile_json.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/session/plan_on_selection.hpp>
#include <ampx/session/session.hpp>
#include <ampx/tune/tuned_plan_key.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace ampx {

namespace {

std::string profile_origin(const PlanRequest& r) {
  if (const auto* path = std::get_if<std::filesystem::path>(&r.profile)) return path->string();
  return "the given profile";
}

PlanningDevice from_profile(capability::DeviceProfile p, const PlanRequest& r) {
  PlanningDevice d;
  d.id = p.device_id.empty() ? p.fingerprint : p.device_id;
  d.name = p.device_name;
  d.source = "profile " + profile_origin(r);
  auto caps = std::make_shared<capability::ProfileCapabilities>(p);
  if (r.costs == CostUse::kModel)
    d.cost = capability::make_profile_cost_model(std::move(p), nullptr);
  d.caps = std::move(caps);
  return d;
}

std::vector<capability::DeviceProfile> profiles_of(const PlanRequest& r) {
  if (const auto* path = std::get_if<std::filesystem::path>(&r.profile))
    return capability::load_profile_file(*path);
  return {std::get<capability::DeviceProfile>(r.profile)};
}

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

std::optional<HalfChoice> Session::resolve_half(const Graph& graph, AmpPolicy& policy,
                                                HalfDType half,
                                                std::span<const PlanDevice> devices) const {
  if (half != HalfDType::kAuto) return std::nullopt;
  const HalfChoice c = choose_half_dtype(graph, policy, devices);
  policy.half = c.half;
  std::string ids;
  for (const PlanDevice& d : devices) ids += (ids.empty() ? "" : ",") + d.caps->device_id();
  spdlog::info("--dtype auto on {}: {} ({} nodes effectively f16, {} effectively bf16{})", ids,
               dtype_name(c.half), c.f16_effective, c.bf16_effective,
               c.any_native ? "" : "; no native 16-bit kernel: the plan stays f32");
  return c;
}

PlanningDevice Session::profile_device(const PlanRequest& r, const std::string& id) const {
  const auto profiles = profiles_of(r);
  auto sel = capability::select_profile(profiles, id);
  if (!sel) {
    std::string have;
    for (const auto& p : profiles) have += (have.empty() ? "" : ", ") + p.device_id;
    throw std::invalid_argument("--profile " + profile_origin(r) + ": no device '" + id +
                                "' (it has: " + have + ")");
  }
  PlanningDevice d = from_profile(*sel, r);
  d.device = host_.find_device(id);
  if (r.purpose == PlanPurpose::kRun) {
    // Running needs the device itself; the profile then only prices.
    const plugins::Device* found = nullptr;
    try {
      found = &host_.device(id);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--device: ") + e.what());
    }
    const plugins::Device& live = *found;
    d.device = &live;
    d.caps = std::make_shared<DeviceCapabilities>(live);
    if (r.costs == CostUse::kModel)
      d.cost = capability::make_profile_cost_model(*sel, capability::make_hint_cost_model(*d.caps));
  }
  return d;
}

PlannedModel Session::plan(const Graph& graph, const PlanRequest& request) {
  const PlanRequest r = with_session_defaults(request);
  PlannedModel pm;
  pm.policy = r.policy;
  pm.purpose = r.purpose;
  pm.source = &graph;
  pm.model_key = r.model_key.empty() ? graph.name : r.model_key;
  const PlanOptions options{.build_graph = r.purpose != PlanPurpose::kInspect,
                            .capability_blind = r.capabilities == CapabilityUse::kBlind};
  const std::string& spec = r.devices.empty() ? options_.devices : r.devices;
  if (r.has_profile()) {
    if (r.selection)
      throw std::invalid_argument(
          "PlanRequest: a profile plans for its own device, not a selection");
    // A stored profile describes one device: no placement across devices.
    const std::string id = spec.empty() ? std::string(kFallbackDevice) : spec;
    if (id == "auto" || id.find(',') != std::string::npos || !r.pins.empty())
      throw std::invalid_argument(
          "--profile plans for one device: give --device ID, without --place");
    pm.profiled = profile_device(r, id);
    CapabilitySource& caps = *pm.profiled->caps;
    const PlanDevice one[] = {{&caps, nullptr, false}};
    pm.dtype_choice = resolve_half(graph, pm.policy, r.half, one);
    PlanOptions o = options;
    o.cost = pm.profiled->cost.get();
    pm.plan = plan_amp(graph, pm.policy, caps, o);
    return pm;
  }
  if (r.selection) {
    pm.selection = *r.selection;
  } else {
    // `auto` ranks the devices for the graph at hand: chosen again for each.
    if (!selection_ || spec == "auto" || selection_spec_ != spec ||
        selection_fallback_ != r.fallback || selection_costs_ != r.costs) {
      select_devices(graph, spec, *r.fallback, *r.costs);
      if (r.logging == PlanLogging::kReport)
        for (const std::string& line : selection_->ranking) spdlog::info("--device auto: {}", line);
    }
    pm.selection = *selection_;
  }
  const auto plan_devices = pm.selection.plan_devices();
  pm.dtype_choice = resolve_half(graph, pm.policy, r.half, plan_devices);
  pm.pins = pm.selection.pins(r.pins);
  pm.plan = plan_on_selection(graph, pm.model_key, pm.policy, pm.selection, pm.pins, options,
                              r.costs == CostUse::kModel ? *r.tuned : TunedPlans::kIgnore,
                              options_.db_path);
  if (r.logging == PlanLogging::kReport) warn_fallbacks(pm.plan);
  return pm;
}

std::vector<PlanningDevice> Session::report_devices(const ReportRequest& r) const {
  PlanRequest pr;
  pr.costs = r.costs;
  pr.purpose = PlanPurpose::kInspect;
  if (r.profile) pr.profile = *r.profile;
  auto live = [&](const std::string& id) {
    const plugins::Device* found = nullptr;
    try {
      found = &host_.device(id);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--device: ") + e.what());
    }
    PlanningDevice d;
    d.id = found->id();
    d.name = found->props().name;
    d.source = "device";
    d.device = found;
    d.caps = std::make_shared<DeviceCapabilities>(*found);
    if (r.costs == CostUse::kModel) d.cost = live_cost_model(*found, *d.caps, options_.db_path);
    return d;
  };
  std::vector<PlanningDevice> devices;
  if (!r.devices.empty()) {
    for (const std::string& id : r.devices)
      devices.push_back(r.profile ? profile_device(pr, id) : live(id));
  } else if (r.profile) {
    for (auto& p : capability::load_profile_file(*r.profile))
      devices.push_back(from_profile(p, pr));
  } else {
    for (const auto& d : host_.devices()) devices.push_back(live(d.id()));
    if (devices.empty()) throw std::runtime_error("no devices found (see `ampx devices`)");
  }
  // A device known only from a profile is planned and predicted, not run.
  if (r.profile)
    for (auto& d : devices) d.device = nullptr;
  if (!r.placements.empty() && r.profile)
    throw std::invalid_argument(
        "--placement plans live devices: it cannot be combined with --profile");
  for (const std::string& spec : r.placements) {
    if (spec == "auto") continue;
    try {
      for (const std::string& id : parse_device_list(spec)) (void)host_.device(id);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--placement '" + spec + "': " + e.what());
    }
  }
  return devices;
}

}  // namespace ampx
