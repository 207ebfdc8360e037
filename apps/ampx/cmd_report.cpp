// `ampx report`: what each amp level really means for the given models on
// each device — 16-bit coverage, Casts, predicted and measured time — as
// text, Markdown, JSON or one HTML file.
#include "commands.hpp"
#include "progress_bar.hpp"

#include <ampx/session/session.hpp>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> models;
  ModelArgs model_args;
  InputArgs inputs;
  MemoryArgs memory;
  std::vector<std::string> devices;
  std::vector<std::string> placements;
  std::string format = "text";
  std::string output;
  std::string dtype = "auto";
  bool no_run = false;
  bool no_cost = false;
  bool no_tuned = false;
  bool tune = false;
  std::string profile;
  std::string db;
  int iters = 3;
  int warmup = 1;
};

int run_report(const GlobalOptions& global, const ReportOptions& opts) {
  if (opts.dtype != "auto" && opts.dtype != "f16" && opts.dtype != "bf16")
    throw UsageError("--dtype '" + opts.dtype + "': expected f16, bf16 or auto");
  ReportRequest request;
  request.devices = opts.devices;
  if (!opts.profile.empty()) request.profile = opts.profile;
  request.half = opts.dtype == "auto" ? HalfDType::kAuto : HalfDType::kPolicy;
  request.half_type = opts.dtype == "bf16" ? DType::kBF16 : DType::kF16;
  request.runs = opts.no_run ? ReportRuns::kPredictOnly : ReportRuns::kMeasure;
  request.iters = opts.iters;
  request.warmup = opts.warmup;
  request.model_options = opts.model_args.to_options();
  request.given = read_given_inputs(opts.inputs);
  request.memory = opts.memory.limit();
  request.placements = opts.placements;
  request.costs = opts.no_cost ? CostUse::kNone : CostUse::kModel;
  if (opts.tune && opts.no_tuned)
    throw UsageError("report: --tune and --no-tuned exclude each other");
  request.tuning = opts.tune       ? ReportTuning::kTuneMissing
                   : opts.no_tuned ? ReportTuning::kIgnore
                                   : ReportTuning::kUse;
  SessionOptions so = session_options(global);
  so.db_path = db_option(opts.db);
  so.use_costs = !opts.no_cost;
  Session session(std::move(so));
  ProgressBar bar("report");
  request.progress = [&](int done, int total, const std::string& what) {
    bar.update(done, total, what);
    spdlog::debug("report: {}/{} {}", done, total, what);
  };
  const capability::Report report = session.report(opts.models, request);
  bar.finish("done");

  std::string text;
  if (opts.format == "json") {
    text = capability::report_to_json(report).dump(2) + "\n";
  } else if (opts.format == "md") {
    text = capability::render_markdown(report);
  } else if (opts.format == "html") {
    text = capability::render_html(report);
  } else {
    text = capability::render_text(report);
  }
  if (opts.output.empty()) {
    std::cout << text;
  } else {
    fileio::write_file_atomically(opts.output, text);
    spdlog::info("report written to {}", opts.output);
  }
  return 0;
}

}  // namespace

Action add_report_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "report", "What each amp level really means for models on each device (coverage, time)");
  auto opts = std::make_shared<ReportOptions>();
  cmd->add_option("MODEL", opts->models,
                  "builtin:cnn, builtin:mlp, builtin:encoder, FILE.onnx, ...")
      ->required();
  opts->model_args.add_to(*cmd);
  opts->inputs.add_to(*cmd);
  opts->memory.add_to(*cmd);
  cmd->add_option("--device", opts->devices, "device ids (repeatable; default: every device)")
      ->check(kNonEmpty)
      ->delimiter(',');
  cmd->add_option("--placement", opts->placements,
                  "a device list (vulkan:0,cpu_ref:0) or auto: also plan each model across it "
                  "and show nodes per device, fallbacks and copies (repeatable)")
      ->take_all();
  cmd->add_option("--format", opts->format, "text, md, json or html")
      ->check(one_of({"text", "md", "json", "html"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opts->output, "write to FILE (atomically) instead of stdout");
  cmd->add_option("--dtype", opts->dtype,
                  "16-bit type: f16, bf16 or auto (per device and level, docs/PLANNER.md)")
      ->capture_default_str();
  cmd->add_flag("--no-run", opts->no_run, "plans and predictions only, no measured times");
  cmd->add_flag("--no-cost", opts->no_cost, "plans without the cost step");
  cmd->add_flag("--no-tuned", opts->no_tuned,
                "report plans made afresh, not the tuned plans `ampx tune` stored");
  cmd->add_flag("--tune", opts->tune,
                "tune O1-O3 on every live device where no tuned plan is stored (ampx tune with "
                "3 verification rounds; stored for the next report)");
  cmd->add_option("--profile", opts->profile,
                  "report the devices of a stored profile (ampx db export) instead of live ones");
  cmd->add_option("--db", opts->db, "capability database with probe data");
  cmd->add_option("--iters", opts->iters, "timed runs per level")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "untimed runs first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  return [&global, opts] { return run_report(global, *opts); };
}

}  // namespace ampx::cli
