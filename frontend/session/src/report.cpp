// Session::report: what each amp level means for models on devices
// (report_request.hpp; rendered by capability/report.hpp).
#include <ampx/session/session.hpp>

#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>
#include <ampx/capability/utc_time.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/host_plugin.hpp>
#include <ampx/models/load_model.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

namespace ampx {

namespace {

using ReportDevice = PlanningDevice;
using capability::CoverageCell;
using capability::LevelRow;

std::string cpu_model() {
  const std::string model = host_plugin::cpuinfo_field("model name");
  return model.empty() ? "unknown CPU" : model;
}

// What the steps below share: the session's plugins and database, the request.
struct ReportContext {
  const plugins::PluginHost& host;
  const ReportRequest& request;
  const std::optional<std::string>& db_path;
  MemoryLimit memory(uint64_t host_bytes) const {
    MemoryLimit m = request.memory;
    m.host_bytes += host_bytes;
    return m;
  }
};

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Every node of the model in dtype `d` (float tensors), asked of `caps`.
void add_coverage(const Graph& g, const ReportDevice& dev,
                  std::map<std::string, capability::CoverageRow>& rows) {
  LoweredNode lowered;
  std::vector<DType> ins, outs;
  for (const Node& n : g.nodes()) {
    bool touches_float = false;
    for (ValueId v : n.inputs) touches_float = touches_float || is_float(g.value(v).type.dtype);
    if (!touches_float || n.op == OpType::kCast) continue;
    auto& row = rows[std::string(op_name(n.op))];
    row.op = std::string(op_name(n.op));
    for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
      ins.clear();
      outs.clear();
      for (ValueId v : n.inputs) {
        const DType t = g.value(v).type.dtype;
        ins.push_back(is_float(t) ? d : t);
      }
      for (ValueId v : n.outputs) {
        const DType t = g.value(v).type.dtype;
        outs.push_back(is_float(t) ? d : t);
      }
      lowered.assign(g, n, ins, outs, false);
      CoverageCell& cell = row.cells[dev.id][std::string(dtype_name(d))];
      switch (dev.caps->query(lowered.desc()).support) {
        case AMPX_SUPPORT_NATIVE:
          ++cell.native;
          break;
        case AMPX_SUPPORT_EMULATED:
          ++cell.emulated;
          break;
        default:
          ++cell.unsupported;
      }
    }
  }
}

// The selection tuned plans of `dev` are keyed and measured on (the device
// with the reference fallback, as `ampx tune MODEL --device ID` makes it),
// one per device and model so that what one level's tuning measured prices
// the next; nullopt where the report plans afresh only.
std::optional<DeviceSelection> tuning_selection(const Graph& g, const ReportDevice& dev,
                                                const ReportContext& ctx) {
  if (ctx.request.tuning == ReportTuning::kIgnore || ctx.request.costs == CostUse::kNone ||
      !dev.device)
    return std::nullopt;
  try {
    return select_devices(
        ctx.host, g, {.spec = dev.id, .fallback = true, .use_costs = true, .db_path = ctx.db_path});
  } catch (const std::exception& e) {
    spdlog::warn("report: no tuned plans for {}: {}", dev.id, e.what());
    return std::nullopt;
  }
}

// A level's plan on one device: the stored tuned plan for it where one
// matches (tuned on the spot first with ReportTuning::kTuneMissing), else planned
// afresh with the device's cost model.
AmpPlan plan_level(const Graph& g, const std::string& model, const AmpPolicy& policy,
                   const ReportDevice& dev, const DeviceSelection* sel, bool build_graph,
                   const ReportContext& ctx, const std::vector<HostTensor>& inputs, LevelRow& row) {
  const PlanOptions fresh{.build_graph = build_graph, .cost = dev.cost.get()};
  if (!sel) return plan_amp(g, policy, *dev.caps, fresh);
  const TunedPlanKey key = tuned_plan_key(g, policy, *sel, {});
  std::optional<StoredTuning> stored = find_tuned_plan(g, model, key, ctx.db_path);
  if (!stored && ctx.request.tuning == ReportTuning::kTuneMissing) {
    TuneOptions o = ctx.request.tune_options;
    o.db_path = ctx.db_path;
    o.store = true;
    o.inputs = inputs;
    o.memory = ctx.memory(0);
    (void)tune_plan(g, model, policy, *sel, {}, o);
    stored = find_tuned_plan(g, model, key, ctx.db_path);
  }
  if (!stored) return plan_amp(g, policy, *dev.caps, fresh);
  // The selection's cost model holds what tuning just measured.
  AmpPlan plan = plan_amp(g, policy, *sel->devices.front().caps,
                          {.build_graph = build_graph,
                           .cost = sel->devices.front().cost.get(),
                           .tuned_f32 = &stored->f32_nodes});
  plan.tuned = stored->note;
  row.tuned = stored->kept;
  row.kept_fp32_tuned = plan.summary.kept_fp32_tuned;
  if (stored->ratio_to_o0 > 0) row.verified_ratio_to_o0 = stored->ratio_to_o0;
  if (stored->noise >= 0) row.noise = stored->noise;
  return plan;
}

struct Measured {
  double ms = 0;
  std::vector<HostTensor> outputs;
};

Measured measure(const AmpPlan& plan, const ReportDevice& dev, const std::vector<HostTensor>& in,
                 const ReportContext& ctx) {
  const FusedGraph fused = fuse_for_device(plan.graph, *dev.caps);
  Executor exec(fused.graph, *dev.device, {},
                {.memory = ctx.memory(host_tensor_bytes(plan.graph))});
  for (int i = 0; i < ctx.request.warmup; ++i) (void)exec.run(in);
  Measured m;
  std::vector<double> t;
  for (int i = 0; i < ctx.request.iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    m.outputs = exec.run(in);
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  m.ms = median_ms(std::move(t));
  return m;
}

}  // namespace

namespace {

DType report_half(const ReportRequest& r, const Graph& g, const AmpPolicy& policy,
                  std::span<const PlanDevice> devices) {
  return r.half == HalfDType::kAuto ? choose_half_dtype(g, policy, devices).half : r.half_type;
}

capability::PlacementSection placement_section(const Graph& g, const std::string& spec,
                                               const ReportContext& ctx) {
  capability::PlacementSection sec;
  sec.spec = spec;
  const DeviceSelection sel = select_devices(ctx.host, g,
                                             {.spec = spec,
                                              .fallback = true,
                                              .use_costs = ctx.request.costs == CostUse::kModel,
                                              .db_path = ctx.db_path});
  for (const auto& d : sel.devices) sec.devices.push_back(d.device->id());
  const auto devices = sel.plan_devices();
  for (AmpLevel level : {AmpLevel::kO0, AmpLevel::kO1, AmpLevel::kO2, AmpLevel::kO3}) {
    capability::PlacementLevel row;
    row.level = std::string(amp_level_name(level));
    try {
      AmpPolicy policy;
      policy.level = level;
      policy.half = report_half(ctx.request, g, policy, devices);
      row.dtype = std::string(dtype_name(policy.half));
      const AmpPlan plan = plan_amp(g, policy, devices, {.build_graph = false});
      const auto& s = plan.summary;
      // The plan drops an unused fallback device: count by id.
      for (const std::string& id : sec.devices) {
        int n = 0;
        for (size_t k = 0; k < plan.devices.size(); ++k)
          if (plan.devices[k] == id) n = s.nodes_per_device[k];
        row.nodes_per_device.push_back(n);
      }
      row.effective_16bit = s.effective_16bit;
      row.fallbacks = s.fallbacks;
      row.placed_by_cost = s.placed_by_cost;
      row.copies = s.copies;
      row.copy_bytes = s.copy_bytes;
      row.predicted_ms = plan.predicted_us >= 0 ? plan.predicted_us / 1000.0 : -1;
    } catch (const std::exception& e) {
      row.error = e.what();
      spdlog::warn("report: placement across {} at {}: {}", spec, row.level, e.what());
    }
    sec.levels.push_back(std::move(row));
  }
  return sec;
}

}  // namespace

capability::Report Session::report(std::span<const std::string> models,
                                   const ReportRequest& settings) {
  // The devices first: a bad id or profile fails before any work.
  const std::vector<ReportDevice> devices = report_devices(settings);
  const ReportContext ctx{host_, settings, options_.db_path};
  capability::Report report;
  report.generated_at = capability::utc_now_iso8601();
  report.host = cpu_model() + ", " +
                std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
  report.ran = settings.runs == ReportRuns::kMeasure;
  const AmpLevel levels[] = {AmpLevel::kO0, AmpLevel::kO1, AmpLevel::kO2, AmpLevel::kO3};
  const int total = static_cast<int>(models.size() * devices.size() * std::size(levels));
  int done = 0;
  for (const std::string& model : models) {
    const Graph g =
        load_model(model, with_given_inputs(settings.model_options, model, settings.given));
    capability::ModelReport mr;
    mr.model = model;
    mr.nodes = static_cast<int>(g.num_nodes());
    std::map<std::string, capability::CoverageRow> coverage;
    const auto inputs = make_inputs(g, settings.seed, settings.given);
    for (const ReportDevice& dev : devices) {
      capability::DeviceSection sec;
      sec.device_id = dev.id;
      sec.device_name = dev.name;
      sec.source = dev.source;
      sec.cost_source = dev.cost ? dev.cost->source() : "none (--no-cost)";
      add_coverage(g, dev, coverage);
      const bool can_run = settings.runs == ReportRuns::kMeasure && dev.device;
      const std::optional<DeviceSelection> tuning = tuning_selection(g, dev, ctx);
      std::optional<Measured> o0;
      for (AmpLevel level : levels) {
        if (settings.progress)
          settings.progress(done, total,
                            model + " on " + dev.id + " " + std::string(amp_level_name(level)));
        ++done;
        LevelRow row;
        row.level = std::string(amp_level_name(level));
        try {
          AmpPolicy policy;
          policy.level = level;
          policy.half = settings.half == HalfDType::kAuto
                            ? choose_half_dtype(g, policy, *dev.caps).half
                            : settings.half_type;
          row.dtype = std::string(dtype_name(policy.half));
          const AmpPlan plan =
              level == AmpLevel::kO0
                  ? plan_amp(g, policy, *dev.caps, {.build_graph = can_run, .cost = dev.cost.get()})
                  : plan_level(g, model, policy, dev, tuning ? &*tuning : nullptr, can_run, ctx,
                               inputs, row);
          const auto& s = plan.summary;
          row.intended_16bit = s.intended_16bit;
          row.effective_16bit = s.effective_16bit;
          row.kept_fp32_no_native = s.kept_fp32_no_native;
          row.kept_fp32_cost = s.kept_fp32_cost;
          row.casts = s.casts - s.casts_on_constants;
          row.predicted_ms = plan.predicted_us >= 0 ? plan.predicted_us / 1000.0 : -1;
          if (can_run) {
            Measured m = measure(plan, dev, inputs, ctx);
            row.measured_ms = m.ms;
            if (level == AmpLevel::kO0) o0 = std::move(m);
            if (o0) {
              double err = 0;
              for (size_t i = 0; i < o0->outputs.size(); ++i)
                err = std::max(
                    err, max_relative_error(level == AmpLevel::kO0 ? o0->outputs[i] : m.outputs[i],
                                            o0->outputs[i]));
              row.max_rel_error = err;
            }
          }
        } catch (const std::exception& e) {
          row.error = e.what();
          spdlog::warn("report: {} on {} at {}: {}", model, dev.id, row.level, e.what());
        }
        sec.levels.push_back(std::move(row));
      }
      mr.devices.push_back(std::move(sec));
    }
    for (const std::string& spec : settings.placements)
      mr.placements.push_back(placement_section(g, spec, ctx));
    for (auto& [op, row] : coverage) {
      row.nodes = 0;
      for (const Node& n : g.nodes()) {
        if (op_name(n.op) != op) continue;
        ++row.nodes;
        if (!n.origin.empty() &&
            std::find(row.origins.begin(), row.origins.end(), n.origin) == row.origins.end())
          row.origins.push_back(n.origin);
      }
      std::sort(row.origins.begin(), row.origins.end());
      mr.coverage.push_back(std::move(row));
    }
    report.models.push_back(std::move(mr));
  }
  if (settings.progress) settings.progress(total, total, "done");
  return report;
}

}  // namespace ampx
