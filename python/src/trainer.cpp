// ampx._ampx.Trainer: Session::train (`ampx train`, docs/TRAINING.md) on
// NumPy data: epochs, evaluation, the trained weights, the trained model as
// ONNX, checkpoints and resume, the overflow diagnostics. The options map
// onto TrainerOptions as `ampx train`'s flags do; the progress bar, the
// resume and the diagnostics' JSON are the CLI's own (ampx_cli_output,
// ampx/session/resume.hpp).
#include "bindings.hpp"

#include "plan_output.hpp"
#include "progress.hpp"
#include "run_profile_output.hpp"
#include "train_output.hpp"
#include "train_report.hpp"

#include <ampx/exec/run_profile.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/onnx/onnx_export.hpp>
#include <ampx/session/resume.hpp>
#include <ampx/session/trainer.hpp>
#include <ampx/train/checkpoint.hpp>
#include <ampx/train/datasets.hpp>
#include <ampx/train/loss_scale.hpp>

#include "error_message.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

namespace ampx::python {
namespace {

struct TrainerState {
  std::shared_ptr<SessionState> session;
  std::optional<train::Trainer> trainer;  // refers to the session
  std::string model;
  int64_t classes = 0;     // cross entropy over [N, classes] predictions, else 0
  std::string amp;         // as given: the curves report's default label
  std::string graph_name;  // the forward graph's
  // fit(report=FILE): the run's curves, written after every epoch.
  std::optional<cli::TrainCurves> curves;
  std::string report;
  ~TrainerState() {
    if (!session || !trainer) return;
    const auto lock = lock_for_destruction(*session);
    trainer.reset();
  }
};

using DataArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

HostTensor tensor_of(const DataArray& a, DType dtype, const char* what) {
  if (a.itemsize() != dtype_size(dtype))
    throw TypeFailure(std::string(what) + ": expected an array of " +
                      std::string(dtype_name(dtype)));
  HostTensor t;
  t.name = what;
  t.type.dtype = dtype;
  for (size_t d = 0; d < a.ndim(); ++d) t.type.shape.push_back(static_cast<int64_t>(a.shape(d)));
  const auto* p = static_cast<const std::byte*>(a.data());
  t.data.assign(p, p + a.nbytes());
  return t;
}

// The package coerces x to float32 and y to int64 (cross entropy) or
// float32 (mse) first; the dataset owns copies, as `ampx train` reads them.
train::Dataset dataset(const TrainerState& s, const DataArray& x, const DataArray& y,
                       const std::string& what) {
  const bool mse = s.trainer->options().graph.loss == train::LossKind::kMse;
  train::Dataset d{tensor_of(x, DType::kF32, "x"),
                   tensor_of(y, mse ? DType::kF32 : DType::kI64, "y")};
  train::check_dataset(d, what, s.classes);
  return d;
}

std::shared_ptr<TrainerState> make_trainer(
    const std::shared_ptr<SessionState>& self, const std::string& model,
    const std::string& optimizer, double lr, double momentum, bool nesterov, double weight_decay,
    const std::string& loss, const std::string& amp, const std::string& dtype,
    const std::string& loss_scale, int64_t batch, uint64_t seed,
    const std::vector<std::string>& freeze, double clip_grad_norm, bool eager,
    bool capability_blind, const std::map<std::string, std::vector<int64_t>>& input_shapes,
    bool diagnose_overflow, bool auto_fallback, int64_t fallback_after, int64_t fallback_window,
    double fallback_underflow, const std::vector<std::string>& keep_fp32,
    const std::vector<std::string>& force_16bit, const std::optional<std::string>& white_list,
    const std::optional<std::string>& black_list, bool data_parallel, double bucket_mb,
    const std::string& allreduce_dtype, double comm_timeout, bool shard_optimizer) {
  if (batch < 1) throw std::invalid_argument("batch must be 1 or more");
  if (loss != "cross-entropy" && loss != "mse")
    throw std::invalid_argument("loss '" + loss + "': expected cross-entropy or mse");
  train::TrainerOptions t;
  t.graph.optimizer.kind = train::parse_optimizer(optimizer);
  t.graph.optimizer.lr = lr;
  t.graph.optimizer.momentum = momentum;
  t.graph.optimizer.nesterov = nesterov;
  t.graph.optimizer.weight_decay = weight_decay;
  t.graph.optimizer.validate();
  t.graph.loss = loss == "mse" ? train::LossKind::kMse : train::LossKind::kCrossEntropy;
  t.graph.freeze = freeze;
  t.graph.clip_grad_norm = clip_grad_norm;
  t.batch = batch;
  t.seed = seed;
  t.eager = eager;
  t.capability_blind = capability_blind;
  // The plan's options as `ampx train` takes them (--keep-fp32,
  // --force-16bit, --white-list, --black-list: PolicyOptions::to_policy).
  PlanArgs plan_args;
  plan_args.amp = amp;
  plan_args.dtype = dtype;
  plan_args.keep_fp32 = keep_fp32;
  plan_args.force_16bit = force_16bit;
  plan_args.white_list = white_list;
  plan_args.black_list = black_list;
  const PlanRequest request = make_plan_request(plan_args, model, self->fallback);
  t.policy = request.policy;
  if (loss_scale != "auto") t.loss_scale = train::LossScaleOptions::parse(loss_scale);
  // --diagnose-overflow, --auto-fallback, --fallback-after, --fallback-window,
  // --fallback-underflow.
  t.overflow.diagnose = diagnose_overflow;
  t.overflow.auto_fallback = auto_fallback;
  t.overflow.fallback_overflows = fallback_after;
  t.overflow.fallback_window = fallback_window;
  t.overflow.fallback_underflow = fallback_underflow;
  t.overflow.validate();
  // `--data-parallel`, `--bucket-mb`, `--allreduce-dtype`, `--comm-timeout`:
  // joins the MPI job this process is a rank of (python under mpirun).
  if (data_parallel) {
    train::DataParallelOptions dp;
    dp.bucket_mb = bucket_mb;
    dp.allreduce_dtype = train::parse_allreduce_dtype(allreduce_dtype);
    if (!(comm_timeout > 0) || comm_timeout > 1e6)
      throw std::invalid_argument("comm_timeout must be in (0, 1e6] seconds");
    dp.comm_timeout = std::chrono::milliseconds(static_cast<int64_t>(comm_timeout * 1000));
    if (shard_optimizer) dp.sharding = train::OptimizerSharding::kZero1;
    t.data_parallel = std::make_shared<train::DataParallel>(dp);
  } else if (shard_optimizer) {
    throw std::invalid_argument("shard_optimizer needs data_parallel=True");
  }
  ModelOptions mo;
  for (const auto& [name, dims] : input_shapes)
    mo.input_shapes[name] = Shape(dims.begin(), dims.end());
  mo.batch_size = batch;  // a symbolic batch dimension trains at `batch`
  auto state = std::make_shared<TrainerState>();
  state->model = model;
  state->amp = amp;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(self->mutex);
    Graph forward;
    try {
      forward = self->session.load(model, mo);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      throw ModelFailure(cli::error_message(e));
    }
    (void)self->session.resolve_half(forward, t.policy, request.half);
    const Shape& pred = forward.value(forward.outputs()[0]).type.shape;
    state->graph_name = forward.name;
    state->classes =
        t.graph.loss == train::LossKind::kCrossEntropy && pred.size() == 2 ? pred[1] : 0;
    // Session::train after resolve_half (the Trainer is not movable: made
    // in place, as Session::train makes it).
    state->trainer.emplace(self->session, std::move(forward), std::move(t));
  }
  state->session = self;
  return state;
}

nb::dict epoch_dict(const train::EpochResult& r, bool skips, bool diagnosed) {
  nb::dict d;
  d["epoch"] = r.epoch;
  d["steps"] = r.steps;
  d["loss"] = r.loss;
  d["step_ms"] = r.step_ms;
  d["samples_per_s"] = r.samples_per_s;
  d["loss_scale"] = r.loss_scale;
  d["overflow_steps"] = r.overflow_steps;
  d["skipped_steps"] = skips ? r.overflow_steps : 0;
  if (diagnosed) {
    // The CLI's fields (overflows, fallbacks, replan_ms), parsed by the package.
    nlohmann::json j = nlohmann::json::object();
    cli::add_epoch_overflows(j, r);
    d["overflows_json"] = j.dump();
  }
  if (r.data_parallel)
    d["data_parallel_json"] = cli::data_parallel_epoch_json(*r.data_parallel).dump();
  return d;
}

// The curves report's file, rewritten (the run so far) as `ampx train
// --report` does after every epoch and at a stop.
void write_curves(TrainerState& s) {
  if (const train::OverflowDiagnostics* d = s.trainer->overflow_diagnostics())
    s.curves->set_diagnostics(*d);
  cli::write_train_report(s.report, s.curves->to_json());
}

// One epoch with `ampx train`'s progress bar (labelled "epoch E/N", a
// step's running loss after the counts) or the caller's callable, then the
// evaluation (with eval data) and the curves report (fit(report=)), as
// `ampx train`'s loop does them.
nb::dict train_epoch(TrainerState& s, const DataArray& x, const DataArray& y, nb::object progress,
                     const std::string& label, const std::optional<DataArray>& eval_x,
                     const std::optional<DataArray>& eval_y) {
  const train::Dataset data = dataset(s, x, y, "x, y");
  std::optional<train::Dataset> eval;
  if (eval_x && eval_y) eval = dataset(s, *eval_x, *eval_y, "eval");
  Progress bar(std::move(progress), label);
  std::function<void(int64_t, int64_t, double)> on_step;
  if (bar.active())
    on_step = [&bar](int64_t done, int64_t total, double loss) {
      bar.update(static_cast<int>(done), static_cast<int>(total), fmt::format("loss {:.4f}", loss));
    };
  train::EpochResult r;
  std::optional<train::Evaluation> ev;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(s.session->mutex);
    try {
      r = s.trainer->train_epoch(data, on_step);
    } catch (const train::TrainingStopped& stopped) {
      if (s.curves) {
        s.curves->add_epoch(stopped.epoch, std::nullopt);
        write_curves(s);
      }
      throw;
    }
    bar.finish(fmt::format("loss {:.4f}", r.loss));
    if (eval) ev = s.trainer->evaluate(*eval);
    if (s.curves) {
      s.curves->add_epoch(r, ev);
      write_curves(s);
    }
  }
  nb::dict d = epoch_dict(r, s.trainer->loss_scaler().options().skip_nonfinite,
                          s.trainer->overflow_diagnostics() != nullptr);
  if (ev) {
    d["eval_loss"] = ev->loss;
    if (s.classes > 0) d["eval_accuracy"] = ev->accuracy;
  }
  return d;
}

// fit(report=FILE, report_label=): `ampx train --report`'s curves for the
// epochs to come, under `label` (empty: the CLI's default, amp level, dtype
// and loss scale).
void start_report(TrainerState& s, const std::string& path, const std::string& label) {
  cli::check_report_path(path);
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  const train::TrainerOptions& o = s.trainer->options();
  std::string name = label;
  if (name.empty())
    name = fmt::format("{} {}{}, loss scale {}{}", s.amp, dtype_name(o.policy.half),
                       o.capability_blind ? " (capability-blind)" : "",
                       s.trainer->loss_scaler().options().str(),
                       o.overflow.auto_fallback ? ", auto-fallback" : "");
  s.curves.emplace(name, s.graph_name,
                   fmt::format("{}", fmt::join(s.trainer->plan().devices, ",")));
  s.report = path;
}

nb::dict evaluate(TrainerState& s, const DataArray& x, const DataArray& y) {
  const train::Dataset data = dataset(s, x, y, "x, y");
  train::Evaluation ev;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(s.session->mutex);
    ev = s.trainer->evaluate(data);
  }
  nb::dict d;
  d["loss"] = ev.loss;
  if (s.classes > 0) d["accuracy"] = ev.accuracy;
  d["samples"] = ev.samples;
  return d;
}

nb::list state_dict(TrainerState& s) {
  std::vector<HostTensor> state;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(s.session->mutex);
    state = s.trainer->state();
  }
  nb::list out;
  for (HostTensor& t : state) {
    const std::string name = t.name;
    const std::string dtype(dtype_name(t.type.dtype));
    out.append(nb::make_tuple(name, dtype, to_numpy(std::move(t))));
  }
  return out;
}

void export_model(TrainerState& s, const std::string& path) {
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  onnx_io::ExportOptions eo;
  eo.doc = "ampx train of " + s.model;
  eo.batch_dim = "batch";  // trained at `batch`, runs at any
  // Every rank (a sharded optimizer's masters are gathered); rank 0 writes.
  const Graph trained = s.trainer->trained_model();
  if (const auto& dp = s.trainer->options().data_parallel; dp && dp->rank() != 0) return;
  onnx_io::write_onnx(trained, path, eo);
}

std::string checkpoint(TrainerState& s, const std::string& dir, int keep) {
  if (keep < 1) throw std::invalid_argument("keep must be 1 or more");
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  // Data parallelism: rank 0 writes (with a sharded optimizer, every rank
  // its shard and rank 0 the manifest); "" on the other ranks.
  return s.trainer->save_checkpoint(dir, keep).string();
}

train::Trainer::LossScaleOnRestore on_restore(bool reset_loss_scale) {
  return reset_loss_scale ? train::Trainer::LossScaleOnRestore::kStartAfresh
                          : train::Trainer::LossScaleOnRestore::kResume;
}

// `ampx train --resume`: the newest checkpoint in `dir`; None when there is
// none yet. A bad one raises ampx.Error with the CLI's line, changing nothing.
std::optional<std::string> resume_latest(TrainerState& s, const std::string& dir,
                                         bool reset_loss_scale) {
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  const auto resumed = train::resume_from_latest(*s.trainer, dir, on_restore(reset_loss_scale));
  if (!resumed) return std::nullopt;
  return resumed->file.string();
}

void restore_file(TrainerState& s, const std::string& file, bool reset_loss_scale) {
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  (void)train::restore_from_file(*s.trainer, file, on_restore(reset_loss_scale));
}

std::optional<std::string> overflow_diagnostics(const TrainerState& s) {
  nb::gil_scoped_release release;  // the lock may be held by a thread waiting for the GIL
  const std::lock_guard lock(s.session->mutex);
  const train::OverflowDiagnostics* d = s.trainer->overflow_diagnostics();
  if (d == nullptr) return std::nullopt;
  return cli::overflow_diagnostics_json(*d, s.trainer->fallbacks()).dump();
}

// `--profile-step N`: step N of the run (counted from 1) profiled when it comes.
void profile_at_step(TrainerState& s, int64_t step) {
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  s.trainer->profile_at_step(step);
}

// The profiled step as `ampx train --format json`'s `profile` event; None
// before it ran.
std::optional<std::string> profiled_step(TrainerState& s) {
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  const std::optional<train::ProfiledStep>& p = s.trainer->profiled_step();
  if (!p) return std::nullopt;
  return cli::profiled_step_json(*p).dump();
}

// `--trace FILE`: the profiled step as a Chrome trace; false before it ran.
bool write_trace(TrainerState& s, const std::string& path) {
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  const std::optional<train::ProfiledStep>& p = s.trainer->profiled_step();
  if (!p) return false;
  fileio::write_file_atomically(path, chrome_trace_json({p->profile}, p->devices, p->predicted));
  return true;
}

nb::tuple load_digits() {
  train::SplitDataset d;
  {
    nb::gil_scoped_release release;
    d = train::load_digits();
  }
  const auto pair = [](train::Dataset& ds) {
    return nb::make_tuple(to_numpy(std::move(ds.inputs)), to_numpy(std::move(ds.labels)));
  };
  return nb::make_tuple(pair(d.train), pair(d.test));
}

}  // namespace

void add_trainer(nb::module_& m, nb::class_<SessionState>& session) {
  nb::class_<TrainerState>(m, "Trainer",
                           "Session::train: a model in training (ampx::train::Trainer).")
      .def("train_epoch", &train_epoch, nb::arg("x"), nb::arg("y"),
           nb::arg("progress") = nb::none(), nb::arg("label") = "epoch",
           nb::arg("eval_x") = nb::none(), nb::arg("eval_y") = nb::none())
      .def("start_report", &start_report, nb::arg("path"), nb::arg("label") = "")
      .def("end_report", [](TrainerState& s) { s.curves.reset(); })
      .def("evaluate", &evaluate, nb::arg("x"), nb::arg("y"))
      .def("state_dict", &state_dict)
      .def("export", &export_model, nb::arg("path"))
      .def("checkpoint", &checkpoint, nb::arg("dir"), nb::arg("keep") = 3)
      .def(
          "make_checkpoint_dir",
          [](const TrainerState&, const std::string& dir) {
            nb::gil_scoped_release release;
            train::make_checkpoint_dir(dir);
          },
          nb::arg("dir"))
      .def("resume_latest", &resume_latest, nb::arg("dir"), nb::arg("reset_loss_scale") = false)
      .def("restore_file", &restore_file, nb::arg("file"), nb::arg("reset_loss_scale") = false)
      .def("overflow_diagnostics", &overflow_diagnostics)
      .def("profile_at_step", &profile_at_step, nb::arg("step"))
      .def("profiled_step", &profiled_step)
      .def("write_trace", &write_trace, nb::arg("path"))
      .def_static("check_trace_path", &cli::check_trace_path, nb::arg("path"))
      .def("plan_json",
           [](TrainerState& s) { return cli::plan_to_json(s.trainer->plan(), s.model).dump(2); })
      .def_prop_ro("epoch", [](const TrainerState& s) { return s.trainer->epoch(); })
      .def_prop_ro("step", [](const TrainerState& s) { return s.trainer->step(); })
      .def_prop_ro("batch", [](const TrainerState& s) { return s.trainer->options().batch; })
      .def_prop_ro("rank",
                   [](const TrainerState& s) {
                     const auto& dp = s.trainer->options().data_parallel;
                     return dp ? dp->rank() : 0;
                   })
      .def_prop_ro("ranks",
                   [](const TrainerState& s) {
                     const auto& dp = s.trainer->options().data_parallel;
                     return dp ? dp->size() : 1;
                   })
      .def_prop_ro("loss_scale",
                   [](const TrainerState& s) { return s.trainer->loss_scaler().options().str(); })
      .def_prop_ro("classes", [](const TrainerState& s) { return s.classes; })
      .def_prop_ro("mse", [](const TrainerState& s) {
        return s.trainer->options().graph.loss == train::LossKind::kMse;
      });
  session.def(
      "trainer", &make_trainer, nb::arg("model"), nb::arg("optimizer") = "sgd",
      nb::arg("lr") = 0.01, nb::arg("momentum") = 0.0, nb::arg("nesterov") = false,
      nb::arg("weight_decay") = 0.0, nb::arg("loss") = "cross-entropy", nb::arg("amp") = "O2",
      nb::arg("dtype") = "auto", nb::arg("loss_scale") = "auto", nb::arg("batch") = 32,
      nb::arg("seed") = 0, nb::arg("freeze") = std::vector<std::string>{},
      nb::arg("clip_grad_norm") = 0.0, nb::arg("eager") = false,
      nb::arg("capability_blind") = false,
      nb::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
      nb::arg("diagnose_overflow") = false, nb::arg("auto_fallback") = false,
      nb::arg("fallback_after") = 2, nb::arg("fallback_window") = 200,
      nb::arg("fallback_underflow") = 0.0, nb::arg("keep_fp32") = std::vector<std::string>{},
      nb::arg("force_16bit") = std::vector<std::string>{}, nb::arg("white_list") = nb::none(),
      nb::arg("black_list") = nb::none(), nb::arg("data_parallel") = false,
      nb::arg("bucket_mb") = 25.0, nb::arg("allreduce_dtype") = "f32",
      nb::arg("comm_timeout") = 60.0, nb::arg("shard_optimizer") = false,
      "Session::train: a Trainer of MODEL with `ampx train`'s options.");
  m.def("load_digits", &load_digits,
        "builtin:digits: ((x_train, y_train), (x_test, y_test)), as `ampx train` splits it.");
}

}  // namespace ampx::python
