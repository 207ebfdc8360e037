#include <ampx/amp/node_desc.hpp>
#include <ampx/capability/calibration.hpp>
#include <ampx/capability/probe.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/capability/utc_time.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/tune/tuner.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace ampx {

namespace {

using capability::CalibratedCostModel;
using Clock = std::chrono::steady_clock;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A plan made runnable on the selection's devices.
struct Compiled {
  std::unique_ptr<FusedGraph> fused;  // heap: the executor refers to its graph
  std::unique_ptr<Executor> exec;
};

Compiled compile(const AmpPlan& plan, const DeviceSelection& sel, const MemoryLimit& memory) {
  std::vector<CapabilitySource*> caps;
  std::vector<const plugins::Device*> devices;
  for (const std::string& id : plan.devices) {
    const int i = sel.index_of(id);
    if (i < 0) throw std::logic_error("tune: plan device " + id + " is not selected");
    caps.push_back(sel.devices[static_cast<size_t>(i)].caps.get());
    devices.push_back(sel.devices[static_cast<size_t>(i)].device);
  }
  Compiled c;
  c.fused = std::make_unique<FusedGraph>(fuse_placed(plan.graph, caps));
  c.exec = std::make_unique<Executor>(c.fused->graph, devices, std::span<const StateBinding>{},
                                      ExecutorOptions{.memory = memory});
  return c;
}

// What a plan chose, node by node: two plans with one key run alike.
std::string choices(const AmpPlan& p) {
  std::string s;
  s.reserve(p.nodes.size() * 2);
  for (const NodePlan& n : p.nodes) {
    s += static_cast<char>('a' + static_cast<int>(n.effective));
    s += static_cast<char>('0' + n.device);
  }
  return s;
}

std::string dtype_choices(const AmpPlan& p) {
  std::string s;
  for (const NodePlan& n : p.nodes) s += static_cast<char>('a' + static_cast<int>(n.effective));
  return s;
}

// Per plan device: the calibrated model of that selected device (or null).
std::vector<CalibratedCostModel*> plan_calibrations(
    const AmpPlan& plan, const DeviceSelection& sel,
    const std::vector<CalibratedCostModel*>& by_selection) {
  std::vector<CalibratedCostModel*> out;
  for (const std::string& id : plan.devices)
    out.push_back(by_selection[static_cast<size_t>(sel.index_of(id))]);
  return out;
}

// Records every step of `runs` as the in-context time of the planned node
// it runs: a fused node's time goes to the node it kept, and the nodes it
// absorbed cost 0 there (their work is in that time). Keyed by the planned
// (unfused) node's signature, which is what the planner asks about.
// A measured plan: its profiled runs (every step timed) and as many plain
// runs (the whole run timed), alternating.
struct Profiled {
  std::vector<RunProfile> runs;
  std::vector<double> plain_us;
};

int record_runs(const AmpPlan& plan, const Compiled& c, const Profiled& prof,
                const std::vector<CalibratedCostModel*>& cals, const std::string& stamp) {
  const std::vector<RunProfile>& runs = prof.runs;
  const Graph& pg = plan.graph;
  std::unordered_map<std::string_view, NodeId> by_name;
  for (NodeId id = 0; id < static_cast<NodeId>(pg.num_nodes()); ++id)
    by_name.emplace(pg.node(id).name, id);
  LoweredNode lowered;
  std::vector<DType> ins, outs;
  int recorded = 0;
  auto record = [&](NodeId id, std::span<const double> samples) {
    const Node& n = pg.node(id);
    CalibratedCostModel* cal = cals[static_cast<size_t>(n.device)];
    if (!cal) return;
    ins.clear();
    outs.clear();
    for (ValueId v : n.inputs) ins.push_back(pg.value(v).type.dtype);
    for (ValueId v : n.outputs) outs.push_back(pg.value(v).type.dtype);
    lowered.assign(pg, n, ins, outs, false);
    cal->calibration().record(lowered.desc(), samples, stamp);
    ++recorded;
  };
  // Each step's samples once: recorded for its node, and their median summed
  // for the per-run correction below.
  double steps_us = 0;
  std::vector<double> samples;
  for (size_t i = 0; i < runs.front().steps.size(); ++i) {
    samples.clear();
    for (const RunProfile& r : runs) samples.push_back(r.steps[i].us);
    steps_us += median_of(samples);
    const StepTiming& st = runs.front().steps[i];
    if (st.copy_from >= 0) continue;
    if (const auto it = by_name.find(st.name); it != by_name.end()) record(it->second, samples);
  }
  const std::vector<double> zeros(runs.size(), 0.0);
  for (const FusedGroup& g : c.fused->groups)
    for (const std::string& a : g.absorbed)
      if (const auto it = by_name.find(a); it != by_name.end()) record(it->second, zeros);
  // What a plain run costs beyond its steps (uploading the inputs,
  // submitting, the final wait), charged to the plan's first device.
  std::vector<double> overhead;
  for (double us : prof.plain_us) overhead.push_back(us - steps_us);
  if (cals.front())
    cals.front()->calibration().record_run_overhead(run_description(pg).desc(), overhead, stamp);
  return recorded;
}

// At least `profile_runs` of each, and more until `min_profile_ms` have
// passed (a small model's kernels take microseconds: their medians need
// more samples), at most ten times as many.
Profiled profile_plan(Executor& exec, std::span<const HostTensor> inputs, const TuneOptions& o) {
  for (int i = 0; i < o.warmup; ++i) (void)exec.run(inputs);
  Profiled p;
  const int least = std::max(1, o.profile_runs);
  const auto start = Clock::now();
  while (
      static_cast<int>(p.runs.size()) < least ||
      (std::chrono::duration<double, std::milli>(Clock::now() - start).count() < o.min_profile_ms &&
       static_cast<int>(p.runs.size()) < 10 * least)) {
    (void)exec.run(inputs, p.runs.emplace_back());
    const auto t0 = Clock::now();
    (void)exec.run(inputs);
    p.plain_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return p;
}

// Median |predicted - measured| / measured over the steps that have both.
double median_node_error(const AmpPlan& plan, const Compiled& c,
                         const std::vector<RunProfile>& runs) {
  const auto predicted = step_predictions(plan, *c.fused, runs.front());
  const ProfileSummary s = summarize_profiles(runs, predicted);
  std::vector<double> errors;
  for (const StepSummary& st : s.steps)
    if (st.predicted_us >= 0 && st.step.us > 0)
      errors.push_back(std::abs(st.predicted_us - st.step.us) / st.step.us);
  return errors.empty() ? -1 : median_of(errors);
}

double timed_median_ms(Executor& exec, std::span<const HostTensor> inputs, int runs) {
  (void)exec.run(inputs);  // warm: caches, clocks
  std::vector<double> ms;
  for (int i = 0; i < std::max(1, runs); ++i) {
    const auto t0 = Clock::now();
    (void)exec.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return median_of(ms);
}

int effective_16(const AmpPlan& p) {
  return p.summary.effective_16bit;
}

}  // namespace

std::vector<double> step_predictions(const AmpPlan& plan, const FusedGraph& fused,
                                     const RunProfile& profile) {
  std::unordered_map<std::string, double> by_name;
  for (const NodePlan& n : plan.nodes) by_name[n.name] = n.predicted_us;
  for (const CastRecord& c : plan.casts) by_name[c.name] = c.predicted_us;
  for (const FusedGroup& g : fused.groups) {
    auto it = by_name.find(g.node);
    if (it == by_name.end() || it->second < 0) continue;
    for (const std::string& a : g.absorbed) {
      const auto ab = by_name.find(a);
      if (ab != by_name.end() && ab->second >= 0) it->second += ab->second;
    }
  }
  std::vector<double> out;
  for (const StepTiming& s : profile.steps) {
    const auto it = s.copy_from < 0 ? by_name.find(s.name) : by_name.end();
    out.push_back(it == by_name.end() ? -1 : it->second);
  }
  return out;
}

TuneResult tune_plan(const Graph& graph, const std::string& model_name, const AmpPolicy& policy,
                     const DeviceSelection& sel, std::span<const DevicePin> pins,
                     const TuneOptions& o) {
  const auto t_start = Clock::now();
  std::vector<CalibratedCostModel*> cals;
  for (const SelectedDevice& d : sel.devices) {
    auto* cal = dynamic_cast<CalibratedCostModel*>(d.cost.get());
    if (!cal)
      throw std::invalid_argument("tune needs cost models (not --no-cost): " + d.device->id() +
                                  " has none");
    cals.push_back(cal);
  }
  TuneResult r;
  r.model_name = model_name;
  r.key = tuned_plan_key(graph, policy, sel, pins);
  const std::string stamp = capability::utc_now_iso8601();
  const auto devices = sel.plan_devices();
  const int total_steps = 3 + o.max_replans + o.verify_rounds + 1;
  int done = 0;
  auto progress = [&](std::string_view what) {
    if (o.progress) o.progress(static_cast<double>(done) / total_steps, what);
    ++done;
  };
  auto plan_with = [&](const AmpPolicy& p, const std::vector<std::string>* tuned_f32) {
    return plan_amp(graph, p, devices, PlanOptions{.tuned_f32 = tuned_f32}, pins);
  };
  MemoryLimit memory = o.memory;
  memory.host_bytes = host_tensor_bytes(graph);

  // Before: the plan as `ampx plan` makes it today, priced without the
  // in-context measurements too (the prediction error before calibration).
  // Its executor is checked for memory before the random inputs are made.
  AmpPlan untuned = plan_with(policy, nullptr);
  Compiled first = compile(untuned, sel, memory);
  // The given inputs by reference (they may be large), else random ones.
  std::vector<HostTensor> drawn;
  if (o.inputs.empty()) drawn = random_inputs(graph, o.seed);
  const std::vector<HostTensor>& inputs = o.inputs.empty() ? drawn : o.inputs;
  {
    AmpPlan uncalibrated = untuned;
    std::vector<capability::CostModel*> inner;
    for (CalibratedCostModel* c : plan_calibrations(untuned, sel, cals))
      inner.push_back(c ? c->inner() : nullptr);
    predict_plan(uncalibrated, inner);
    progress("measure the untuned plan");
    Compiled c = std::move(first);
    const Profiled prof = profile_plan(*c.exec, inputs, o);
    r.node_error_before = median_node_error(uncalibrated, c, prof.runs);
    r.e2e_error_before = uncalibrated.predicted_us;  // compared after verification
    record_runs(untuned, c, prof, plan_calibrations(untuned, sel, cals), stamp);
  }
  AmpPolicy o0_policy = policy;
  o0_policy.level = AmpLevel::kO0;
  o0_policy.overrides.clear();
  AmpPlan o0 = plan_with(o0_policy, nullptr);
  const std::vector<std::string> none;
  const AmpPlan all16 = plan_with(policy, &none);  // no cost step: every native node 16-bit
  std::vector<std::string> measured = {choices(untuned)};
  for (const AmpPlan* p : {static_cast<const AmpPlan*>(&o0), &all16}) {
    progress(p == &o0 ? "measure O0" : "measure every native node in 16-bit");
    if (std::find(measured.begin(), measured.end(), choices(*p)) != measured.end()) continue;
    measured.push_back(choices(*p));
    Compiled c = compile(*p, sel, memory);
    record_runs(*p, c, profile_plan(*c.exec, inputs, o), plan_calibrations(*p, sel, cals), stamp);
  }

  // Measure, re-plan from the measured costs, until the plan stops changing.
  AmpPlan tuned = plan_with(policy, nullptr);
  std::string last = choices(untuned);
  for (r.replans = 0; r.replans < o.max_replans; ++r.replans) {
    progress(fmt::format("re-plan {}", r.replans + 1));
    if (choices(tuned) == last) {
      r.converged = true;
      break;
    }
    last = choices(tuned);
    Compiled c = compile(tuned, sel, memory);
    record_runs(tuned, c, profile_plan(*c.exec, inputs, o), plan_calibrations(tuned, sel, cals),
                stamp);
    tuned = plan_with(policy, nullptr);
  }
  if (!r.converged && choices(tuned) == last) r.converged = true;
  done = 3 + o.max_replans;

  // Every candidate priced by the calibrated models, for the table.
  for (AmpPlan* p : {&untuned, &o0}) {
    std::vector<capability::CostModel*> cm;
    for (CalibratedCostModel* c : plan_calibrations(*p, sel, cals)) cm.push_back(c);
    predict_plan(*p, cm);
  }

  // Verify: tuned, untuned and O0 in alternation, the order rotated each
  // round so that drift falls on every plan alike.
  struct Candidate {
    std::string label;
    const AmpPlan* plan;
    int compiled;
  };
  std::vector<Candidate> cands = {
      {"tuned", &tuned, -1}, {"untuned", &untuned, -1}, {"O0", &o0, -1}};
  AmpPlan blind;
  if (o.compare_capability_blind) {
    blind = plan_amp(graph, policy, devices, PlanOptions{.capability_blind = true}, pins);
    cands.push_back({"blind", &blind, -1});
  }
  // Held together through the rounds; each is checked for memory alone
  // (exec/memory_budget.hpp), so up to four plans' arenas must fit at once.
  std::vector<Compiled> compiled;
  std::vector<std::string> compiled_keys;
  for (Candidate& cand : cands) {
    const std::string k = choices(*cand.plan);
    const auto it = std::find(compiled_keys.begin(), compiled_keys.end(), k);
    if (it != compiled_keys.end()) {
      cand.compiled = static_cast<int>(it - compiled_keys.begin());
      continue;
    }
    cand.compiled = static_cast<int>(compiled.size());
    compiled.push_back(compile(*cand.plan, sel, memory));
    compiled_keys.push_back(k);
  }
  std::vector<std::vector<double>> rounds(compiled.size());
  const int n_rounds = std::max(1, o.verify_rounds);
  for (int round = 0; round < n_rounds; ++round) {
    progress(fmt::format("verify round {} of {}", round + 1, n_rounds));
    for (size_t j = 0; j < compiled.size(); ++j) {
      const size_t i = (j + static_cast<size_t>(round)) % compiled.size();
      rounds[i].push_back(timed_median_ms(*compiled[i].exec, inputs, o.verify_runs));
    }
  }
  const auto& o0_rounds = rounds[static_cast<size_t>(cands[2].compiled)];
  double noise = 0.01;
  for (const Candidate& cand : cands) {
    const auto& mine = rounds[static_cast<size_t>(cand.compiled)];
    VerifiedPlan v;
    v.label = cand.label;
    v.effective_16bit = effective_16(*cand.plan);
    v.predicted_ms = cand.plan->predicted_us >= 0 ? cand.plan->predicted_us / 1000.0 : -1;
    v.rounds_ms = mine;
    v.median_ms = median_of(mine);
    std::vector<double> ratios;
    for (size_t k = 0; k < mine.size(); ++k) ratios.push_back(mine[k] / o0_rounds[k]);
    v.ratio_to_o0 = median_of(ratios);
    const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    if (cand.label != "O0" && cand.label != "blind") noise = std::max(noise, 0.5 * (*hi - *lo));
    r.verified.push_back(std::move(v));
  }
  r.noise = noise;
  const VerifiedPlan& vt = r.verified[0];
  const VerifiedPlan* best = &r.verified[0];
  for (size_t i = 0; i < 3; ++i)  // the candidates that may be kept
    if (r.verified[i].ratio_to_o0 < best->ratio_to_o0) best = &r.verified[i];
  if (vt.ratio_to_o0 <= 1 + noise && vt.ratio_to_o0 <= best->ratio_to_o0 + noise) {
    r.kept = "tuned";
    r.reason = fmt::format("measured {:.3f} x O0, {:.3f} x the untuned plan (noise bound {:.1f} %)",
                           vt.ratio_to_o0, vt.ratio_to_o0 / r.verified[1].ratio_to_o0, 100 * noise);
  } else {
    r.kept = best->label;
    r.reason = fmt::format(
        "the tuned plan measured {:.3f} x O0, slower than {} ({:.3f} x O0) beyond the noise "
        "bound {:.1f} %",
        vt.ratio_to_o0, best->label, best->ratio_to_o0, 100 * noise);
  }
  if (r.e2e_error_before > 0) {
    const double m = r.verified[1].median_ms * 1000.0;
    r.e2e_error_before = std::abs(r.e2e_error_before - m) / m;
  } else {
    r.e2e_error_before = -1;
  }

  // The kept plan as a stored choice: the nodes it keeps f32 that the plan
  // without a cost step runs 16-bit, grown until applying them gives the
  // same dtypes as the measured plan.
  const AmpPlan& target = r.kept == "tuned" ? tuned : r.kept == "untuned" ? untuned : o0;
  std::vector<std::string> f32;
  AmpPlan applied = plan_with(policy, &f32);
  for (int pass = 0; pass < 4 && dtype_choices(applied) != dtype_choices(target); ++pass) {
    std::unordered_map<std::string_view, DType> want;
    for (const NodePlan& n : target.nodes) want.emplace(n.name, n.effective);
    for (const NodePlan& n : applied.nodes)
      if (is_16bit_float(n.effective) && !is_16bit_float(want.at(n.name))) f32.push_back(n.name);
    applied = plan_with(policy, &f32);
  }
  if (dtype_choices(applied) != dtype_choices(target))
    spdlog::warn("tune: the stored choice does not reproduce the measured {} plan exactly", r.kept);
  r.f32_nodes = f32;
  done = total_steps - 1;
  progress("profile the kept plan");
  {
    Compiled c = compile(applied, sel, memory);
    r.node_error_after = median_node_error(applied, c, profile_plan(*c.exec, inputs, o).runs);
  }
  const double kept_ms =
      std::find_if(r.verified.begin(), r.verified.end(), [&](const VerifiedPlan& v) {
        return v.label == r.kept;
      })->median_ms;
  if (applied.predicted_us > 0)
    r.e2e_error_after = std::abs(applied.predicted_us / 1000.0 - kept_ms) / kept_ms;
  applied.tuned = fmt::format("tuned plan of {} (kept: {}, {} node{} f32 by measurement)", stamp,
                              r.kept, f32.size(), f32.size() == 1 ? "" : "s");
  r.plan = std::move(applied);
  for (CalibratedCostModel* c : cals)
    r.measured_signatures += static_cast<int>(c->calibration().size());
  r.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();

  if (o.store) {
    auto store = capability::Store::open(capability::resolve_db_path(o.db_path));
    for (size_t i = 0; i < sel.devices.size(); ++i)
      store.put_node_timings(sel.devices[i].device->props().fingerprint,
                             cals[i]->calibration().rows());
    store.put_tuned_plan(
        {r.key.model_hash, r.key.devices, r.key.options, model_name, stamp, tuned_plan_json(r)});
    r.stored = true;
  }
  if (o.progress) o.progress(1.0, "done");
  return r;
}

std::string tuned_plan_json(const TuneResult& r) {
  nlohmann::json verified = nlohmann::json::array();
  for (const VerifiedPlan& v : r.verified)
    verified.push_back({{"plan", v.label},
                        {"effective_16bit", v.effective_16bit},
                        {"predicted_ms", v.predicted_ms},
                        {"median_ms", v.median_ms},
                        {"rounds_ms", v.rounds_ms},
                        {"ratio_to_o0", v.ratio_to_o0}});
  auto num = [](double x) { return x < 0 ? nlohmann::json(nullptr) : nlohmann::json(x); };
  nlohmann::json j{{"schema", "ampx.tuned/1"},
                   {"model", r.model_name},
                   {"model_hash", r.key.model_hash},
                   {"devices", r.plan.devices},
                   {"fingerprints", r.key.devices},
                   {"options", r.key.options},
                   {"kept", r.kept},
                   {"reason", r.reason},
                   {"f32_nodes", r.f32_nodes},
                   {"replans", r.replans},
                   {"converged", r.converged},
                   {"noise", r.noise},
                   {"verified", std::move(verified)},
                   {"measured_signatures", r.measured_signatures},
                   {"prediction_error",
                    {{"node_before", num(r.node_error_before)},
                     {"node_after", num(r.node_error_after)},
                     {"end_to_end_before", num(r.e2e_error_before)},
                     {"end_to_end_after", num(r.e2e_error_after)}}},
                   {"seconds", r.seconds}};
  return j.dump();
}

}  // namespace ampx
