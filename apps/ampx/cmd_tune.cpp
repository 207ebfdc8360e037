// `ampx tune`: measure, re-plan from the measurements, verify against O0 in
// alternation, keep the plan that is not slower (docs/TUNING.md). The work
// itself is Session::tune; this file parses and prints.
#include "commands.hpp"
#include "plan_output.hpp"
#include "progress_bar.hpp"

#include <ampx/capability/store.hpp>
#include <ampx/session/session.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

struct TuneCliOptions {
  std::string model;
  DeviceArgs devices;
  ModelArgs model_args;
  InputArgs inputs;
  MemoryArgs memory;
  PolicyOptions policy;
  TuneOptions tune;
  bool no_store = false;
  Format format = Format::kText;
};

std::string pct(double x) {
  return x < 0 ? std::string("-") : fmt::format("{:.0f} %", 100 * x);
}

void print_text(std::ostream& out, const TuneResult& r, const std::string& model,
                const TuneOptions& o, const std::string& db) {
  out << fmt::format("{}: {}\n", model, plan_title(r.plan));
  out << fmt::format("  tuned in {:.1f} s: {} re-plan{} from in-context measurements, {}\n",
                     r.seconds, r.replans, r.replans == 1 ? "" : "s",
                     r.converged ? "the plan stopped changing"
                                 : fmt::format("stopped at the bound ({})", o.max_replans));
  out << fmt::format(
      "  verified: {} rounds x {} runs each, plans in alternation; noise bound {:.1f} %\n",
      o.verify_rounds, o.verify_runs, 100 * r.noise);
  out << fmt::format("    {:<8} {:>12} {:>13} {:>10} {:>7}\n", "plan", "16-bit nodes",
                     "predicted ms", "median ms", "x O0");
  for (const VerifiedPlan& v : r.verified)
    out << fmt::format("    {:<8} {:>12} {:>13} {:>10.3f} {:>7.3f}\n", v.label, v.effective_16bit,
                       v.predicted_ms < 0 ? "-" : fmt::format("{:.3f}", v.predicted_ms),
                       v.median_ms, v.ratio_to_o0);
  out << fmt::format("  kept: {} ({}); {} node{} kept f32 by measurement\n", r.kept, r.reason,
                     r.f32_nodes.size(), r.f32_nodes.size() == 1 ? "" : "s");
  out << fmt::format(
      "  prediction error (median): per node {} before calibration, {} after; end to end {} -> "
      "{}\n",
      pct(r.node_error_before), pct(r.node_error_after), pct(r.e2e_error_before),
      pct(r.e2e_error_after));
  if (r.stored)
    out << fmt::format(
        "  stored: {} measured node signatures and the kept plan in {}; plan, run, report and "
        "export use it unless --no-tuned\n",
        r.measured_signatures, db);
  else
    out << "  not stored (--no-store)\n";
}

int run_tune(const GlobalOptions& global, TuneCliOptions& opts) {
  if (opts.policy.no_cost) throw UsageError("tune: --no-cost leaves nothing to tune");
  if (opts.policy.capability_blind)
    throw UsageError("tune: --capability-blind plans are not tuned");
  (void)opts.policy.to_policy();  // a bad flag fails before the model loads
  std::vector<GivenInput> given = read_given_inputs(opts.inputs);
  const Graph graph =
      load_model(opts.model, with_given_inputs(opts.model_args.to_options(), opts.model, given));
  SessionOptions so = session_options(global);
  opts.devices.apply_to(so);
  opts.policy.apply_to(so);
  Session session(std::move(so));
  PlanRequest request = opts.policy.plan_request(opts.model, opts.devices, PlanPurpose::kRun);
  request.tuned = TunedPlans::kIgnore;  // the untuned plan is one of those compared
  const PlannedModel pm = session.plan(graph, request);
  if (!given.empty()) opts.tune.inputs = make_inputs(graph, opts.tune.seed, std::move(given));
  opts.tune.memory = opts.memory.limit();
  opts.tune.store = !opts.no_store;
  opts.tune.db_path = db_option(opts.policy.db);
  std::unique_ptr<ProgressBar> bar;
  if (opts.format == Format::kText) {
    bar = std::make_unique<ProgressBar>("tune " + pm.plan.device_id);
    opts.tune.progress = [&bar](double f, std::string_view what) {
      bar->update(static_cast<int>(f * 100), 100, std::string(what));
    };
  }
  const TuneResult r = session.tune(graph, pm, opts.tune);
  if (bar) bar->finish(r.kept);
  const std::string db = capability::resolve_db_path(opts.tune.db_path).string();
  if (opts.format == Format::kJson) {
    nlohmann::json j = nlohmann::json::parse(tuned_plan_json(r));
    j["schema"] = "ampx.tune/1";
    j["stored"] = r.stored;
    if (r.stored) j["db"] = db;
    j["plan"] = plan_to_json(r.plan, opts.model);
    std::cout << j.dump(2) << "\n";
  } else {
    print_text(std::cout, r, opts.model, opts.tune, db);
  }
  return 0;
}

}  // namespace

Action add_tune_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "tune", "Measure a plan node by node, re-plan from the measurements, verify it against O0");
  auto opts = std::make_shared<TuneCliOptions>();
  cmd->add_option("MODEL", opts->model, "builtin:cnn, builtin:mlp, builtin:encoder or FILE.onnx")
      ->required();
  opts->model_args.add_to(*cmd);
  opts->inputs.add_to(*cmd);
  opts->memory.add_to(*cmd);
  opts->devices.add_to(*cmd);
  opts->policy.add_to(*cmd);
  // No --profile (tune measures the live device) and no --no-tuned (tune
  // always starts from the untuned plan): not offered rather than ignored.
  cmd->add_option("--max-replans", opts->tune.max_replans, "measure/re-plan rounds at most")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  cmd->add_option("--profile-runs", opts->tune.profile_runs, "profiled runs per measured plan")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--rounds", opts->tune.verify_rounds,
                  "verification rounds (tuned, untuned and O0 timed in alternation)")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  cmd->add_option("--iters", opts->tune.verify_runs, "timed runs per plan per round")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--seed", opts->tune.seed, "seed of the random inputs")
      ->check(kUnsigned64)
      ->capture_default_str();
  cmd->add_flag("--compare-blind", opts->tune.compare_capability_blind,
                "also time the capability-blind plan in the verification rounds (for comparison; "
                "never kept)");
  cmd->add_flag("--no-store", opts->no_store,
                "measure and verify only: write nothing to the capability database");
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_tune(global, *opts); };
}

}  // namespace ampx::cli
