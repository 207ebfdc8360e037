// `ampx train`: a model trained on .npy data or builtin:digits through the
// same planner and plugins as inference, with checkpoints and resume
// (docs/TRAINING.md).
#include "commands.hpp"
#include "progress_bar.hpp"
#include "run_profile_output.hpp"
#include "train_output.hpp"
#include "train_report.hpp"

#include <ampx/exec/run_profile.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/onnx/onnx_export.hpp>
#include <ampx/session/resume.hpp>
#include <ampx/session/session.hpp>
#include <ampx/session/trainer.hpp>
#include <ampx/train/checkpoint.hpp>
#include <ampx/train/datasets.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <iostream>
#include <map>

namespace ampx::cli {
namespace {

constexpr int64_t kNoProfileStep = -1;
constexpr int64_t kDefaultProfileStep = 3;  // after two warm-up steps

struct TrainOptions {
  std::string model;
  std::string data;
  std::string eval;
  int epochs = 10;
  int64_t batch = 32;
  std::string optimizer = "sgd";
  double lr = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  std::string loss = "cross-entropy";
  std::vector<std::string> freeze;
  std::string device;
  PolicyOptions policy;
  uint64_t seed = 0;
  std::string checkpoint;
  int keep = 3;
  bool resume = false;
  std::string export_path;
  bool eager = false;
  std::string loss_scale = "auto";
  double clip_grad_norm = 0.0;
  bool reset_loss_scale = false;
  bool diagnose_overflow = false;
  bool auto_fallback = false;
  int64_t fallback_after = 2;
  int64_t fallback_window = 200;
  double fallback_underflow = 0.0;
  std::string report;
  std::string report_label;
  ModelArgs model_args;
  MemoryArgs memory;  // --max-memory: each compiled step (not --eager)
  // --profile-step N / --trace FILE: one step of the run profiled
  // (kNoProfileStep: not asked; with --trace alone, kDefaultProfileStep).
  int64_t profile_step = kNoProfileStep;
  std::string trace;
  Format format = Format::kText;
  // Data parallelism under mpirun (docs/DISTRIBUTED.md).
  bool data_parallel = false;
  double bucket_mb = 25;
  std::string allreduce_dtype = "f32";
  double comm_timeout_s = 60;
  bool shard_optimizer = false;
};

// Ranks other than 0 of a data-parallel run print nothing on stdout (the
// run's lines come from rank 0) and log only warnings and errors; their
// one-line errors still reach stderr.
class QuietRank {
 public:
  explicit QuietRank(int rank) {
    if (rank == 0) return;
    saved_ = std::cout.rdbuf(nullptr);
    level_ = spdlog::get_level();
    spdlog::set_level(std::max(level_, spdlog::level::warn));
  }
  ~QuietRank() {
    if (!saved_) return;
    std::cout.clear();
    std::cout.rdbuf(saved_);
    spdlog::set_level(level_);
  }
  QuietRank(const QuietRank&) = delete;
  QuietRank& operator=(const QuietRank&) = delete;

 private:
  std::streambuf* saved_ = nullptr;
  spdlog::level::level_enum level_ = spdlog::level::info;
};

std::shared_ptr<train::DataParallel> join_data_parallel(const TrainOptions& o) {
  if (!o.data_parallel) {
    if (o.bucket_mb != 25 || o.allreduce_dtype != "f32" || o.comm_timeout_s != 60 ||
        o.shard_optimizer)
      throw UsageError(
          "--bucket-mb, --allreduce-dtype, --comm-timeout and --shard-optimizer need "
          "--data-parallel");
    return nullptr;
  }
  train::DataParallelOptions d;
  d.bucket_mb = o.bucket_mb;
  d.allreduce_dtype = train::parse_allreduce_dtype(o.allreduce_dtype);
  d.comm_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.comm_timeout_s * 1000));
  if (o.shard_optimizer) d.sharding = train::OptimizerSharding::kZero1;
  try {
    d.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return std::make_shared<train::DataParallel>(d);
}

// The epoch's overflowed steps (the first of them in full, and how many
// more) and its fallbacks, after the epoch line.
void print_overflows(const train::EpochResult& r) {
  if (!r.overflows.empty()) {
    const train::OverflowEvent& e = r.overflows.front();
    std::cout << fmt::format(
        "  overflow at step {}: layer '{}' ({}), {} '{}' {:.3g} % non-finite, amax {:.4g} "
        "against {} max {:.4g}{}\n",
        e.step, e.layer, e.op, train::probe_kind_name(e.kind), e.tensor, 100.0 * e.nonfinite_share,
        e.amax, dtype_name(e.dtype), e.dtype_max,
        r.overflows.size() > 1 ? fmt::format(" (and {} more steps)", r.overflows.size() - 1) : "");
  }
  for (const train::FallbackRecord& f : r.fallbacks)
    std::cout << fmt::format(
        "  step {}: layer '{}' {}: moved to f32 (overflow-fallback), the step recompiled in "
        "{:.0f} ms\n",
        f.step, f.layer, f.detail, r.replan_ms);
}

// The layers that overflowed first or underflowed most, at the end.
void print_layer_summary(const train::OverflowDiagnostics& d) {
  const auto layers = d.summary();
  std::cout << fmt::format(
      "overflow diagnostics ({} layers; underflow: gradients below {}'s "
      "normal range {:g}):\n",
      layers.size(), dtype_name(d.half()), train::dtype_min_normal(d.half()));
  std::cout << fmt::format("  {:<24} {:<19} {:<5} {:>9} {:>10} {:>10} {:>10}\n", "layer", "op",
                           "dtype", "overflows", "grad amax", "act amax", "underflow");
  size_t shown = 0;
  for (const train::LayerOverflowSummary& l : layers) {
    if (shown++ == 10) break;
    std::cout << fmt::format("  {:<24} {:<19} {:<5} {:>9} {:>10.3g} {:>10.3g} {:>9.1f}%{}\n",
                             l.layer, l.op, dtype_name(l.dtype), l.first_overflows, l.gradient_amax,
                             l.activation_amax, 100.0 * l.underflow_share,
                             l.fallback ? "  (moved to f32)" : "");
  }
  if (layers.size() > shown) std::cout << fmt::format("  ... {} more\n", layers.size() - shown);
}

// The profiled step (--profile-step, --trace): the per-node table, as
// `ampx run --per-node` prints it.
void print_profiled_step(const train::ProfiledStep& p, const std::string& trace) {
  std::cout << fmt::format("profile of step {} (epoch {}, {} samples):\n", p.step, p.epoch, p.rows);
  print_per_node(std::cout, summarize_profiles({p.profile}, p.predicted), p.devices);
  if (!trace.empty())
    std::cout << fmt::format("  trace: {} (Perfetto or chrome://tracing)\n", trace);
}

int run_train(const GlobalOptions& global, TrainOptions o) {
  train::TrainerOptions t;
  t.data_parallel = join_data_parallel(o);
  const int rank = t.data_parallel ? t.data_parallel->rank() : 0;
  const QuietRank quiet(rank);
  t.graph.optimizer.kind = train::parse_optimizer(o.optimizer);
  t.graph.optimizer.lr = o.lr;
  t.graph.optimizer.momentum = o.momentum;
  t.graph.optimizer.nesterov = o.nesterov;
  t.graph.optimizer.weight_decay = o.weight_decay;
  try {
    t.graph.optimizer.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  t.graph.loss = o.loss == "mse" ? train::LossKind::kMse : train::LossKind::kCrossEntropy;
  t.graph.freeze = o.freeze;
  t.batch = o.batch;
  t.seed = o.seed;
  t.policy = o.policy.to_policy();
  t.capability_blind = o.policy.capability_blind;
  t.eager = o.eager;
  t.graph.clip_grad_norm = o.clip_grad_norm;
  if (o.loss_scale != "auto") {
    try {
      t.loss_scale = train::LossScaleOptions::parse(o.loss_scale);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--loss-scale: ") + e.what());
    }
  }
  t.overflow.diagnose = o.diagnose_overflow;
  t.overflow.auto_fallback = o.auto_fallback;
  t.overflow.fallback_overflows = o.fallback_after;
  t.overflow.fallback_window = o.fallback_window;
  t.overflow.fallback_underflow = o.fallback_underflow;
  if (o.resume && o.checkpoint.empty()) throw UsageError("--resume needs --checkpoint DIR");
  if (!o.report.empty()) check_report_path(o.report);
  if (o.profile_step != kNoProfileStep && o.profile_step < 1)
    throw UsageError(fmt::format("--profile-step {}: steps count from 1", o.profile_step));
  if (!o.trace.empty()) check_trace_path(o.trace);

  SessionOptions so = session_options(global);
  so.devices = o.device;
  o.policy.apply_to(so);
  so.use_tuned = false;  // `ampx tune` tunes inference plans, never a training step
  so.max_memory_bytes = o.memory.max_memory;
  so.max_memory_origin = "--max-memory";
  Session session(so);
  ModelOptions mo = o.model_args.to_options();
  mo.batch_size = o.batch;  // a symbolic batch dimension trains at --batch
  const Graph forward = session.load(o.model, mo);
  // `--dtype auto`: the 16-bit type the selected devices run natively for
  // this model, as `ampx plan --dtype auto` resolves it (before the
  // Trainer, whose default loss scale depends on it).
  (void)session.resolve_half(forward, t.policy, o.policy.half());
  const std::string half(dtype_name(t.policy.half));

  train::Dataset data = train::load_dataset(o.data);
  std::optional<train::Dataset> eval;
  if (!o.eval.empty())
    eval = train::load_dataset(o.eval, true);
  else if (o.data == "builtin:digits")
    eval = train::load_dataset(o.data, true);
  const Shape& pred = forward.value(forward.outputs()[0]).type.shape;
  const int64_t classes =
      t.graph.loss == train::LossKind::kCrossEntropy && pred.size() == 2 ? pred[1] : 0;
  auto check_data = [&](const train::Dataset& d, const std::string& what) {
    train::check_dataset(d, what, classes);
    const Shape& want = forward.value(forward.inputs()[0]).type.shape;
    Shape got = d.inputs.type.shape;
    if (got.size() != want.size() || !std::equal(got.begin() + 1, got.end(), want.begin() + 1))
      throw UsageError(what + ": samples of shape " + shape_str(Shape(got.begin() + 1, got.end())) +
                       " do not fit the model's input " +
                       shape_str(Shape(want.begin() + 1, want.end())));
  };
  check_data(data, o.data);
  if (eval) check_data(*eval, o.eval.empty() ? o.data + " (test split)" : o.eval);
  // Steps of the whole run (a resumed one included), for --profile-step.
  const int64_t global_batch = o.batch * (t.data_parallel ? t.data_parallel->size() : 1);
  const int64_t run_steps = o.epochs * ((data.size() + global_batch - 1) / global_batch);
  if (o.profile_step > run_steps)
    throw UsageError(fmt::format("--profile-step {}: the run has {} steps ({} epochs of {})",
                                 o.profile_step, run_steps, o.epochs, run_steps / o.epochs));

  train::Trainer trainer = session.train(forward, t);
  // Made once the model and data are known good (nothing is left behind for
  // a bad one), yet before the first epoch's work, not after it.
  // Rank 0 writes what the run leaves behind (checkpoints, report,
  // export); every rank reads a checkpoint to resume.
  const bool writes = rank == 0;
  if (!o.checkpoint.empty() && writes) train::make_checkpoint_dir(o.checkpoint);
  if (o.resume) {
    if (const auto resumed = train::resume_from_latest(
            trainer, o.checkpoint,
            o.reset_loss_scale ? train::Trainer::LossScaleOnRestore::kStartAfresh
                               : train::Trainer::LossScaleOnRestore::kResume)) {
      const train::Checkpoint& c = resumed->checkpoint;
      if (o.reset_loss_scale)
        spdlog::info("--reset-loss-scale: {} starts afresh (the checkpoint had {}, scale {})",
                     trainer.loss_scaler().options().str(), c.loss_scale_schedule,
                     c.loss_scale.scale);
      spdlog::info("resumed from {} (epoch {}, step {})", resumed->file.string(), c.epoch, c.step);
    } else {
      spdlog::info("--resume: no checkpoint in {} yet, starting afresh", o.checkpoint);
    }
  }
  if (o.profile_step != kNoProfileStep || !o.trace.empty()) {
    const int64_t step =
        o.profile_step != kNoProfileStep
            ? o.profile_step
            : std::min(run_steps, std::max(kDefaultProfileStep, trainer.step() + 1));
    if (step <= trainer.step())
      throw UsageError(fmt::format("--profile-step {}: the resumed run starts at step {}", step,
                                   trainer.step() + 1));
    trainer.profile_at_step(step);
  }
  // The first plan; an automatic fallback replaces it (trainer.plan()).
  const AmpPlan first_plan = trainer.plan();
  const AmpPlan& plan = first_plan;
  if (o.format == Format::kText) {
    std::cout << fmt::format(
        "training {} on {}: {} weights ({} parameters), amp {} {}, {} of {} nodes 16-bit, {} {}\n",
        forward.name, fmt::join(plan.devices, ","), trainer.training_graph().trainable,
        trainer.training_graph().parameters, o.policy.amp,
        o.policy.dtype_auto() ? half + " (--dtype auto)" : half, plan.summary.effective_16bit,
        plan.nodes.size(), o.optimizer, fmt::format("lr {}", o.lr));
    std::cout << fmt::format("loss scale {}: {}\n", trainer.loss_scaler().options().str(),
                             trainer.loss_scale_reason());
    if (const auto& m = trainer.sharded_memory()) std::cout << sharded_memory_line(*m) << "\n";
    if (!trainer.shared_copies().empty()) {
      std::map<std::string, int> per_value;  // shared initializer -> copies made
      std::vector<std::string> order;
      for (const train::SharedStateCopy& c : trainer.shared_copies())
        if (per_value[c.value]++ == 0) order.push_back(c.value);
      std::vector<std::string> items;
      for (const std::string& v : order) items.push_back(fmt::format("'{}' {}", v, per_value[v]));
      std::cout << fmt::format(
          "shared initializers, each reader given its own copy ('<value>@<node>'): {}\n",
          fmt::join(items, ", "));
    }
  }
  const bool scaler_skips = trainer.loss_scaler().options().skip_nonfinite;
  // The curves report: this run under its label, written after every epoch
  // (and at a stop), so that a failed run still shows.
  std::optional<TrainCurves> curves;
  if (!o.report.empty() && writes) {
    std::string label = o.report_label;
    if (label.empty())
      label = fmt::format("{} {}{}, loss scale {}{}", o.policy.amp, half,
                          o.policy.capability_blind ? " (capability-blind)" : "",
                          trainer.loss_scaler().options().str(),
                          o.auto_fallback ? ", auto-fallback" : "");
    curves.emplace(label, forward.name, fmt::format("{}", fmt::join(plan.devices, ",")));
  }
  for (int e = trainer.epoch(); e < o.epochs; ++e) {
    ProgressBar bar(fmt::format("epoch {}/{}", e + 1, o.epochs));
    train::EpochResult r;
    try {
      r = trainer.train_epoch(data, [&](int64_t done, int64_t total, double loss) {
        bar.update(static_cast<int>(done), static_cast<int>(total),
                   fmt::format("loss {:.4f}", loss));
      });
    } catch (const train::TrainingStopped& stopped) {
      if (curves) {
        curves->add_epoch(stopped.epoch, std::nullopt);
        if (const train::OverflowDiagnostics* d = trainer.overflow_diagnostics())
          curves->set_diagnostics(*d);
        write_train_report(o.report, curves->to_json());
      }
      throw;
    }
    bar.finish(fmt::format("loss {:.4f}", r.loss));
    std::optional<train::Evaluation> ev;
    if (eval) ev = trainer.evaluate(*eval);
    if (curves) {
      curves->add_epoch(r, ev);
      if (const train::OverflowDiagnostics* d = trainer.overflow_diagnostics())
        curves->set_diagnostics(*d);
      write_train_report(o.report, curves->to_json());
    }
    std::string saved;
    // Every rank: the state is read everywhere, and a sharded optimizer's
    // ranks each write their shard.
    if (!o.checkpoint.empty()) saved = trainer.save_checkpoint(o.checkpoint, o.keep).string();
    if (o.format == Format::kJson) {
      nlohmann::json j{{"schema", "ampx.train/1"}, {"event", "epoch"},
                       {"epoch", r.epoch},         {"epochs", o.epochs},
                       {"steps", r.steps},         {"train_loss", r.loss},
                       {"step_ms", r.step_ms},     {"samples_per_s", r.samples_per_s}};
      if (ev) {
        j["eval_loss"] = ev->loss;
        if (classes > 0) j["eval_accuracy"] = ev->accuracy;
      }
      // Each step's run, for a median (bench/train_vs_torch.py).
      j["step_times_ms"] = nlohmann::json::array();
      for (const train::StepRecord& rec : r.records) j["step_times_ms"].push_back(rec.run_ms);
      if (!saved.empty()) j["checkpoint"] = saved;
      j["loss_scale"] = r.loss_scale;
      j["overflow_steps"] = r.overflow_steps;
      j["skipped_steps"] = scaler_skips ? r.overflow_steps : 0;
      if (trainer.overflow_diagnostics()) add_epoch_overflows(j, r);
      if (r.data_parallel) {
        j["data_parallel"] = data_parallel_epoch_json(*r.data_parallel);
        j["comm_times_ms"] = nlohmann::json::array();
        for (const train::StepRecord& rec : r.records) j["comm_times_ms"].push_back(rec.comm_ms);
      }
      std::cout << j.dump() << std::endl;
    } else {
      std::string line = fmt::format("epoch {}/{}: train loss {:.4f}", r.epoch, o.epochs, r.loss);
      if (ev) {
        line += fmt::format(", eval loss {:.4f}", ev->loss);
        if (classes > 0) line += fmt::format(", accuracy {:.2f} %", 100.0 * ev->accuracy);
      }
      line += fmt::format(", step {:.2f} ms, {:.0f} samples/s", r.step_ms, r.samples_per_s);
      if (const auto& d = r.data_parallel)
        line += fmt::format(
            " (rank 0 of {}: global batch {}, all-reduce {:.2f} ms/step, {:.2f} ms "
            "of it waited for)",
            d->ranks, d->global_batch, d->comm_ms_per_step, d->exposed_comm_ms_per_step);
      if (scaler_skips || r.overflow_steps > 0)
        line += fmt::format(", loss scale {:g}, {} steps {}", r.loss_scale, r.overflow_steps,
                            scaler_skips ? "skipped (overflow)" : "with non-finite gradients");
      std::cout << line << std::endl;
      print_overflows(r);
    }
  }
  if (const std::optional<train::ProfiledStep>& p = trainer.profiled_step()) {
    if (!o.trace.empty() && writes)
      fileio::write_file_atomically(o.trace,
                                    chrome_trace_json({p->profile}, p->devices, p->predicted));
    if (o.format == Format::kJson)
      std::cout << profiled_step_json(*p).dump() << std::endl;
    else
      print_profiled_step(*p, o.trace);
  }
  if (!o.export_path.empty()) {
    // Every rank: a sharded optimizer's masters are gathered from their owners.
    const Graph trained = trainer.trained_model();
    if (writes) {
      onnx_io::ExportOptions eo;
      eo.doc = "trained by ampx train (" + std::to_string(trainer.epoch()) + " epochs)";
      eo.batch_dim = "batch";  // it trained at --batch; it runs at any
      onnx_io::write_onnx(trained, o.export_path, eo);
      if (o.format == Format::kText) std::cout << "wrote " << o.export_path << "\n";
    }
  }
  if (o.format == Format::kJson) {
    // The plan now: an automatic fallback re-planned the step.
    const AmpPlan& plan = trainer.plan();
    nlohmann::json j{{"schema", "ampx.train/1"},   {"event", "done"},
                     {"model", forward.name},      {"devices", plan.devices},
                     {"amp", o.policy.amp},        {"dtype", half},
                     {"nodes", plan.nodes.size()}, {"nodes_16bit", plan.summary.effective_16bit},
                     {"epochs", trainer.epoch()},  {"steps", trainer.step()}};
    const train::LossScaleState& ls = trainer.loss_scaler().state();
    j["loss_scale"] = {{"schedule", trainer.loss_scaler().options().str()},
                       {"reason", trainer.loss_scale_reason()},
                       {"scale", ls.scale},
                       {"overflow_steps", ls.overflow_steps},
                       {"last_overflow_step", ls.last_overflow_step}};
    if (const train::OverflowDiagnostics* d = trainer.overflow_diagnostics()) {
      j["diagnostics"] = overflow_diagnostics_json(*d, trainer.fallbacks());
    }
    if (!o.export_path.empty()) j["exported"] = o.export_path;
    if (const auto& m = trainer.sharded_memory()) j["sharded_optimizer"] = sharded_memory_json(*m);
    if (!o.trace.empty() && trainer.profiled_step()) j["trace"] = o.trace;
    j["shared_copies"] = nlohmann::json::array();
    for (const train::SharedStateCopy& c : trainer.shared_copies())
      j["shared_copies"].push_back({{"value", c.value},
                                    {"node", c.node},
                                    {"role", train::state_role_name(c.role)},
                                    {"copy", c.copy}});
    std::cout << j.dump() << std::endl;
  } else if (const train::OverflowDiagnostics* d = trainer.overflow_diagnostics()) {
    print_layer_summary(*d);
  }
  return 0;
}

}  // namespace

Action add_train_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "train a model with AMP: autodiff, f32 master weights, checkpoints (docs/TRAINING.md)");
  cmd->add_option("MODEL", o->model, "builtin:NAME or an .onnx file")->required()->check(kNonEmpty);
  cmd->add_option("--data", o->data,
                  "training data: builtin:digits, a directory with inputs.npy and labels.npy, or "
                  "INPUTS.npy,LABELS.npy")
      ->required()
      ->check(kNonEmpty);
  cmd->add_option("--eval", o->eval, "evaluation data, as --data (builtin:digits: its test split)");
  cmd->add_option("--epochs", o->epochs, "epochs in all (a resumed run continues to it)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--batch", o->batch, "samples per step")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--optimizer", o->optimizer, "sgd, adam or adamw")
      ->capture_default_str()
      ->check(one_of({"sgd", "adam", "adamw"}));
  cmd->add_option("--lr", o->lr, "learning rate (> 0)")->capture_default_str();
  cmd->add_option("--momentum", o->momentum, "SGD momentum in [0, 1)")->capture_default_str();
  cmd->add_flag("--nesterov", o->nesterov, "SGD with Nesterov momentum");
  cmd->add_option("--weight-decay", o->weight_decay, "L2 (sgd, adam) or decoupled (adamw)")
      ->capture_default_str();
  cmd->add_option("--loss", o->loss, "cross-entropy (labels i64) or mse")
      ->capture_default_str()
      ->check(one_of({"cross-entropy", "mse"}));
  cmd->add_option("--freeze", o->freeze, "weight name or prefix* not to train (repeatable)")
      ->take_all();
  cmd->add_option("--device", o->device,
                  "device list or auto (default: AMPX_DEVICES, else cpu_ref:0)");
  cmd->add_option("--seed", o->seed, "data order and dropout masks")
      ->check(kUnsigned64)
      ->capture_default_str();
  cmd->add_option("--checkpoint", o->checkpoint, "directory: a checkpoint after every epoch")
      ->check(kNonEmpty);
  cmd->add_option("--keep", o->keep, "checkpoints kept")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--resume", o->resume, "continue from the newest checkpoint in --checkpoint");
  cmd->add_option("--loss-scale", o->loss_scale,
                  "auto (the level's default: dynamic at O2 in f16, else none), none, fixed[:S] "
                  "(128), dynamic[:INIT[,FACTOR[,WINDOW]]] (2^24,2,2000: MindSpore's) or torch "
                  "(2^16,2,2000, no floor)")
      ->check(kNonEmpty);
  cmd->add_option("--clip-grad-norm", o->clip_grad_norm,
                  "clip the unscaled gradients to this global L2 norm (0: off)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--reset-loss-scale", o->reset_loss_scale,
                "on --resume, start the loss-scale schedule afresh instead of refusing a "
                "checkpoint written with another one");
  cmd->add_flag("--diagnose-overflow", o->diagnose_overflow,
                "probe every layer's activation and gradients each step: name the layer that "
                "overflowed first, and summarise overflow and underflow per layer");
  cmd->add_flag("--auto-fallback", o->auto_fallback,
                "move a layer that overflows too often to f32 (overflow-fallback) and go on; "
                "implies --diagnose-overflow");
  cmd->add_option("--fallback-after", o->fallback_after,
                  "--auto-fallback: a layer named first at more than K overflowed steps...")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--fallback-window", o->fallback_window, "... within the last W steps")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--fallback-underflow", o->fallback_underflow,
                  "--auto-fallback: also move a 16-bit layer whose gradients are on average more "
                  "than this share below the normal range over a window (0: report only)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--report", o->report,
                  "write the training curves to this HTML file (one file, no network); a run "
                  "with another label is added beside the runs already in it")
      ->check(kNonEmpty);
  cmd->add_option("--report-label", o->report_label,
                  "the run's name in --report (default: amp level, dtype and loss scale)")
      ->check(kNonEmpty);
  cmd->add_option("--export", o->export_path, "write the trained model as ONNX")->check(kNonEmpty);
  cmd->add_flag("--eager", o->eager,
                "node-by-node dispatch as PyNative mode does: the step unfused, each kernel "
                "prepared and given buffers of its own at every step");
  cmd->add_option("--profile-step", o->profile_step,
                  "profile step N of the run (counted from 1, the steps before it warming up): "
                  "every node's time, the kernel it ran on and the reorders it caused, as "
                  "`ampx run --per-node` shows them");
  cmd->add_option("--trace", o->trace,
                  "write the profiled step (--profile-step, default 3 or the last) to FILE in the "
                  "Chrome trace-event format")
      ->check(kNonEmpty);
  cmd->add_flag("--data-parallel", o->data_parallel,
                "train on every rank of the MPI job this process is in (mpirun -np N ampx train "
                "...): --batch per rank, gradients summed over the ranks (docs/DISTRIBUTED.md)");
  cmd->add_option("--bucket-mb", o->bucket_mb,
                  "--data-parallel: gradients per all-reduce bucket, in MiB of f32")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 1e6));
  cmd->add_option("--allreduce-dtype", o->allreduce_dtype,
                  "--data-parallel: what gradients travel as: f32, bf16, f16 (the loss-scaled "
                  "gradients, unscaled after), or auto (each gradient's own dtype)")
      ->capture_default_str()
      ->check(one_of({"f32", "bf16", "f16", "auto"}));
  cmd->add_option("--comm-timeout", o->comm_timeout_s,
                  "--data-parallel: seconds a collective waits for the other ranks before the "
                  "run stops")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  cmd->add_flag("--shard-optimizer", o->shard_optimizer,
                "--data-parallel: ZeRO-1: each rank keeps and updates the optimizer state of the "
                "weights it owns, gradients reduced to their owner, weights all-gathered after "
                "each step; checkpoints in shards (docs/DISTRIBUTED.md)");
  o->policy.add_to(*cmd);
  o->model_args.add_to(*cmd);
  o->memory.add_to(*cmd);
  add_format_option(*cmd, o->format);
  return [&global, o] { return run_train(global, *o); };
}

}  // namespace ampx::cli
