#include <ampx/session/trainer.hpp>

#include <ampx/train/fused_update.hpp>
#include <ampx/train/step_gradients.hpp>
#include <ampx/tune/tuner.hpp>
#include "trainer_program.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>

#include <ampx/train/shuffle.hpp>

#include <array>

namespace ampx::train {

namespace {

using detail::shuffled;
using detail::splitmix64;

// Rows `rows` of a row-major tensor.
HostTensor gather_rows(const HostTensor& t, std::span<const int64_t> rows) {
  const size_t row_bytes = t.data.size() / static_cast<size_t>(t.type.shape.at(0));
  HostTensor out{t.name, t.type, std::vector<std::byte>(rows.size() * row_bytes)};
  out.type.shape[0] = static_cast<int64_t>(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(out.data.data() + i * row_bytes,
                t.data.data() + static_cast<size_t>(rows[i]) * row_bytes, row_bytes);
  return out;
}

float scalar_of(const HostTensor& t) {
  float v = 0;
  std::memcpy(&v, t.data.data(), 4);
  return v;
}

// The overflow probe's rows [amax, non-finite share, underflow share] over
// the ranks: the largest amax, the mean shares (every rank's share has the
// same weight: its rows are an even share of the global batch, bar the
// last), so that every rank's diagnostics decide the same.
void reduce_overflow_stats(DataParallel& dp, std::vector<float>& rows) {
  const size_t probes = rows.size() / 3;
  std::vector<float> amax(probes), shares(2 * probes);
  for (size_t i = 0; i < probes; ++i) {
    amax[i] = rows[3 * i];
    shares[2 * i] = rows[3 * i + 1];
    shares[2 * i + 1] = rows[3 * i + 2];
  }
  dp.max(amax);
  dp.sum(shares);
  const auto ranks = static_cast<float>(dp.size());
  for (size_t i = 0; i < probes; ++i) {
    rows[3 * i] = amax[i];
    rows[3 * i + 1] = shares[2 * i] / ranks;
    rows[3 * i + 2] = shares[2 * i + 1] / ranks;
  }
}

HostTensor i64_scalar_tensor(const std::string& name, uint64_t value) {
  HostTensor t{name, {DType::kI64, {1}}, std::vector<std::byte>(8)};
  std::memcpy(t.data.data(), &value, 8);
  return t;
}

}  // namespace

Trainer::Trainer(Session& session, Graph forward, TrainerOptions options)
    : session_(session), forward_(std::move(forward)), options_(std::move(options)) {
  if (options_.batch < 1) throw std::invalid_argument("batch size must be >= 1");
  if (options_.loss_scale) {
    loss_scale_reason_ = "set by the caller";
  } else {
    options_.loss_scale = LossScaleOptions::default_for(options_.policy.level, options_.policy.half,
                                                        &loss_scale_reason_);
  }
  scaler_ = LossScaler(*options_.loss_scale);
  // The model as given: a checkpoint names it so, whatever untying does.
  model_fingerprint_ = train::model_fingerprint(forward_);
  // Every reader of a shared initializer trains its own copy: the step,
  // the evaluation, the checkpoints and the trained model all see them.
  UntiedModel untied = untie_shared_state(forward_, options_.graph);
  forward_ = std::move(untied.graph);
  shared_copies_ = std::move(untied.copies);
  for (const std::string& line : describe_shared_copies(shared_copies_))
    spdlog::info("shared initializer {}: each reader trains its own", line);
  // Data parallelism normalises over the global batch: each BatchNorm's
  // sums are added over the ranks (SyncBatchNorm), so that N ranks at batch
  // b take the step one process takes at N b, and every rank's running
  // statistics stay the same.
  if (options_.data_parallel) options_.graph.batch_statistics = BatchStatistics::kSynchronized;
  options_.graph.skip_nonfinite = options_.loss_scale->skip_nonfinite;
  options_.overflow.validate();
  options_.overflow.diagnose = options_.overflow.diagnose || options_.overflow.auto_fallback;
  options_.graph.diagnose_overflow = options_.overflow.diagnose;
  options_.graph.underflow_below = dtype_min_normal(options_.policy.half);
  if (options_.data_parallel &&
      options_.data_parallel->options().sharding == OptimizerSharding::kZero1)
    shard_weights();
  Program& p = activate(options_.batch);
  if (options_.data_parallel) require_agreement(p);
  if (options_.overflow.diagnose) start_diagnostics(p);
}

void Trainer::require_agreement(const Program& p) {
  DataParallel& dp = *options_.data_parallel;
  dp.require_agreement("model", model_fingerprint_);
  dp.require_agreement("training options", run_options() + " seed " +
                                               std::to_string(options_.seed) + " loss scale " +
                                               scaler_.options().str());
  // The plan: every node's op, device and output dtypes. Ranks whose
  // devices answer differently (one with native bf16, one without) would
  // run different steps.
  std::string plan;
  for (const Node& n : p.plan().graph.nodes()) {
    // A sharded optimizer's updates are each rank's own weights'.
    if (sharded() && (n.op == OpType::kSgdUpdate || n.op == OpType::kAdamUpdate)) continue;
    plan += n.name + ":" + std::string(op_name(n.op)) + "@" + std::to_string(n.device);
    for (ValueId v : n.outputs) {
      plan += ',';
      plan += dtype_name(p.plan().graph.value(v).type.dtype);
    }
    plan += ";";
  }
  dp.require_agreement("plan (" + std::to_string(p.plan().graph.num_nodes()) + " nodes)", plan);
}

void Trainer::attach_exchange(Program& p) {
  DataParallel& dp = *options_.data_parallel;
  // The buckets follow the step's weight order, which every rank shares
  // whatever its plan scheduled.
  std::map<std::string, size_t> order;
  std::vector<std::string> weights;
  for (const StateEntry& e : p.tg.state) {
    if (e.role != StateRole::kWeight) continue;
    order.emplace(e.name, order.size());
    weights.push_back(e.name);
  }
  std::vector<StepGradient> grads = step_gradients(*p.compiled->execution_plan().graph, weights);
  if (grads.size() != order.size())
    throw std::logic_error("the training step's guard reads " + std::to_string(grads.size()) +
                           " gradients for " + std::to_string(order.size()) + " weights");
  std::vector<StepGradient> sorted(grads.size());
  for (StepGradient& g : grads) {
    const auto it = order.find(g.weight);
    if (it == order.end())
      throw std::logic_error("gradient of an unknown weight '" + g.weight + "'");
    sorted[it->second] = std::move(g);
  }
  if (wire_dtypes_.empty()) {
    for (const StepGradient& g : sorted) {
      switch (dp.options().allreduce_dtype) {
        case AllreduceDtype::kF32:
          wire_dtypes_.push_back(DType::kF32);
          break;
        case AllreduceDtype::kBF16:
          wire_dtypes_.push_back(DType::kBF16);
          break;
        case AllreduceDtype::kF16:
          wire_dtypes_.push_back(DType::kF16);
          break;
        case AllreduceDtype::kAuto:
          wire_dtypes_.push_back(g.produced);
          break;
      }
    }
  }
  const Graph& g = *p.compiled->execution_plan().graph;
  std::vector<BucketedGradient> bucketed;
  std::vector<ExchangedValue> values;
  for (size_t k = 0; k < sorted.size(); ++k) {
    bucketed.push_back({sorted[k].weight, element_count(g.value(sorted[k].value).type.shape),
                        wire_dtypes_[k], sharded() ? weight_owner_[k] : -1});
    values.push_back({sorted[k].value, 0});
  }
  std::optional<GuardRule> guard;
  if (sharded()) {
    // The guard's hyper' and stats, one group: the verdict over every
    // rank's statistics is written into both before the first update.
    const auto it = std::find_if(g.nodes().begin(), g.nodes().end(),
                                 [](const Node& n) { return n.name == kUpdateGuardNode; });
    if (it == g.nodes().end() || it->outputs.size() != 2)
      throw std::logic_error("the sharded training step has no update guard");
    const int group = static_cast<int>(values.size());
    values.push_back({it->outputs[0], group});
    values.push_back({it->outputs[1], group});
    guard = GuardRule{options_.graph.clip_grad_norm, options_.graph.skip_nonfinite};
  }
  // The synchronized BatchNorms' sums and their gradients, each summed
  // alone when first read (groups 1, 2, ...: not with the buckets).
  std::map<std::string, ValueId> by_name;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) by_name[g.value(v).name] = v;
  for (const SynchronizedValue& s : p.tg.synchronized) {
    for (const std::string& name : {s.forward, s.gradient}) {
      if (name.empty()) continue;  // no gradient flows through this one
      const auto it = by_name.find(name);
      if (it == by_name.end())
        throw std::logic_error("the running step lost BatchNorm '" + s.layer + "''s value '" +
                               name + "'");
      values.push_back({it->second, static_cast<int>(values.size())});
    }
  }
  p.exchange = dp.make_exchange(bucketed, guard);
  p.exec().set_exchange(values, p.exchange.get());
}

void Trainer::start_diagnostics(const Program& p) {
  std::vector<std::string> layers;
  for (const Node& n : forward_.nodes()) layers.push_back(n.name);
  diagnostics_.emplace(p.tg, p.plan(), options_.policy.half, std::move(layers));
}

double Trainer::enable_diagnostics() {
  options_.overflow.diagnose = true;
  options_.graph.diagnose_overflow = true;
  const double ms = replan();
  start_diagnostics(*active_);
  return ms;
}

double Trainer::replan() {
  int64_t batch = options_.batch;
  for (const auto& [b, prog] : programs_)
    if (prog.get() == active_) batch = b;
  const std::vector<HostTensor> current = state();
  const auto t0 = std::chrono::steady_clock::now();
  programs_.clear();
  active_ = nullptr;
  (void)program(options_.batch);  // plan() and training_graph() describe it
  Program& p = activate(batch);
  for (size_t i = 0; i < current.size(); ++i) p.write_state(i, current[i].data);
  if (diagnostics_) diagnostics_->replan(p.tg, p.plan());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void Trainer::check_fallback_layers(const std::vector<FallbackRecord>& records) const {
  for (const FallbackRecord& r : records) {
    bool found = false;
    for (const Node& n : forward_.nodes()) found = found || n.name == r.layer;
    if (!found)
      throw std::invalid_argument("fallback layer '" + r.layer + "' is not a node of model '" +
                                  forward_.name + "'");
  }
}

void Trainer::set_fallbacks(std::vector<FallbackRecord> records) {
  check_fallback_layers(records);
  std::vector<std::string> names;
  for (const FallbackRecord& r : records) names.push_back(r.layer);
  if (records == fallbacks_) return;
  fallbacks_ = std::move(records);
  options_.policy.overflow_fallback = std::move(names);
  replan();
  if (diagnostics_)
    for (const FallbackRecord& r : fallbacks_) diagnostics_->mark_fallback(r.layer);
}

Trainer::~Trainer() = default;

Trainer::Program& Trainer::program(int64_t batch) {
  auto& slot = programs_[batch];
  if (slot) return *slot;
  auto p = std::make_unique<Program>();
  p->tg = build_training_graph(with_batch_size(forward_, batch), options_.graph);
  const auto t0 = std::chrono::steady_clock::now();
  p->planned = session_.plan(p->tg.step, plan_request());
  // Every later plan (another batch size, a re-plan, the evaluation) runs
  // on the devices this one was planned for.
  if (!selection_) selection_ = p->planned.selection;
  CompileOptions compile;
  for (const StateEntry& e : p->tg.state) compile.state.push_back(e.binding);
  std::string optimizer = "per-tensor updates";
  // ZeRO-1: other ranks' 16-bit weights held as their copies alone.
  std::optional<PlannedModel> holding;
  if (sharded()) {
    std::vector<size_t> inputs;
    std::set<size_t> owned;
    for (const StateEntry& e : p->tg.state) {
      if (e.role != StateRole::kWeight) continue;
      if (weight_owner_[inputs.size()] == rank()) owned.insert(inputs.size());
      inputs.push_back(e.binding.input);
    }
    WorkingWeights w = hold_working_copies(p->plan().graph, inputs, owned);
    p->working = w.dtypes;
    p->held.assign(p->tg.state.size(), DType::kF32);
    for (size_t i = 0, k = 0; i < p->tg.state.size(); ++i)
      if (p->tg.state[i].role == StateRole::kWeight && !owned.contains(k++))
        p->held[i] = p->working[k - 1];
    if (w.held_16bit > 0) {
      holding = p->planned;
      holding->plan.graph = std::move(w.graph);
    }
  }
  const PlannedModel& source = holding ? *holding : p->planned;
  if (options_.eager) {
    // Node by node, PyNative's way (exec/eager_executor.hpp): the planned
    // step as it is, its per-tensor updates included (no fused pass).
    compile.mode = ExecutionMode::kEager;
    p->compiled.emplace(session_.compile(source, compile));
    optimizer += " (eager: node by node)";
  } else if (sharded()) {
    // The fused pass takes the guard's verdict inside one node; a sharded
    // optimizer's verdict is taken over the ranks between the guard and
    // the updates.
    optimizer += " (sharded optimizer: the guard's verdict is taken over the ranks)";
  } else if (options_.update_lowering == TrainerOptions::UpdateLowering::kFused) {
    // The optimizer as one pass where the updates' device answers for it
    // (train/fused_update.hpp); otherwise the planned per-tensor nodes.
    LoweredUpdates lowered = fuse_updates(p->plan().graph, p->planned.caps());
    if (lowered.fused) {
      PlannedModel step = p->planned;
      step.plan.graph = std::move(lowered.graph);
      for (const WeightCopy& c : lowered.copies) compile.state.push_back(c.binding);
      p->copies = std::move(lowered.copies);
      p->compiled.emplace(session_.compile(step, compile));
      optimizer = "one fused optimizer pass writing " + std::to_string(p->copies.size()) +
                  " 16-bit weight copies";
    } else {
      optimizer += " (" + lowered.reason + ")";
    }
  }
  if (!p->compiled) p->compiled.emplace(session_.compile(source, compile));
  if (options_.data_parallel) attach_exchange(*p);
  if (sharded() && batch == options_.batch) sharded_memory_ = measure_sharding(*p);
  spdlog::info(
      "training step for batch {}: {} nodes ({} 16-bit), {} state tensors ({} in place), {}, "
      "planned and compiled in {:.0f} ms",
      batch, p->plan().graph.num_nodes(), p->plan().summary.effective_16bit, p->tg.state.size(),
      p->exec().state_in_place(), optimizer,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  slot = std::move(p);
  return *slot;
}

Trainer::Program& Trainer::activate(int64_t batch) {
  if (active_ && active_ == programs_[batch].get()) return *active_;
  Program& next = program(batch);
  if (active_) {
    // The state moves with the active program (a last partial batch).
    const std::vector<HostTensor> current = state();
    for (size_t i = 0; i < current.size(); ++i) next.write_state(i, current[i].data);
  } else {
    for (size_t i = 0; i < next.tg.state.size(); ++i)
      next.write_state(i, next.tg.state[i].initial.data);
  }
  active_ = &next;
  return next;
}

std::vector<HostTensor> Trainer::step_inputs(const Program& p, const Dataset& data,
                                             std::span<const int64_t> rows,
                                             double loss_weight) const {
  const TrainingGraph& tg = p.tg;
  if (tg.input_count(TrainingInput::kData) != 1)
    throw std::invalid_argument("model '" + forward_.name + "' has " +
                                std::to_string(tg.input_count(TrainingInput::kData)) +
                                " inputs: the trainer feeds one, the samples");
  std::vector<HostTensor> in(tg.data_inputs);
  // Each tensor goes to its slot's position, under the step's name for it.
  const auto put = [&](TrainingInput slot, size_t k, HostTensor t) {
    const size_t i = tg.input(slot, k);
    t.name = tg.step.value(tg.step.inputs()[i]).name;
    in[i] = std::move(t);
  };
  put(TrainingInput::kData, 0, gather_rows(data.inputs, rows));
  put(TrainingInput::kLabels, 0, gather_rows(data.labels, rows));
  // Data parallelism: the ranks' gradients arrive summed, so the update
  // divides by the rank count with the loss scale; a rank's seed carries
  // its share of an uneven last batch, so that the sum is the global
  // batch's mean gradient.
  put(TrainingInput::kHyper, 0,
      hyper_tensor(options_.graph.optimizer, step_ + 1, 1.0 / (scaler_.scale() * ranks())));
  put(TrainingInput::kLossScale, 0, loss_scale_tensor(scaler_.scale() * loss_weight));
  // Each Dropout's seed follows from (seed, step, node): a resumed run draws
  // the same masks.
  for (size_t d = 0; d < tg.input_count(TrainingInput::kDropoutSeed); ++d)
    put(TrainingInput::kDropoutSeed, d,
        i64_scalar_tensor(
            "", splitmix64(options_.seed ^ splitmix64(static_cast<uint64_t>(step_) * 1024 + d))));
  return in;
}

EpochResult Trainer::train_epoch(const Dataset& data,
                                 const std::function<void(int64_t, int64_t, double)>& progress) {
  const int64_t n = data.size();
  if (n == 0) throw std::invalid_argument("the training data is empty");
  if (options_.data_parallel && agreed_data_size_ != n) {
    options_.data_parallel->require_agreement("training data size", std::to_string(n));
    agreed_data_size_ = n;
  }
  // One order for every rank: step k trains global batch k of it, each
  // rank its share.
  const std::vector<int64_t> order =
      shuffled(n, splitmix64(options_.seed) ^ static_cast<uint64_t>(epoch_ + 1));
  const int64_t b = options_.batch * ranks();
  int64_t steps = (n + b - 1) / b;
  EpochResult r;
  r.epoch = epoch_ + 1;
  if (options_.data_parallel) {
    r.data_parallel = DataParallelEpoch{
        .ranks = ranks(),
        .rank = rank(),
        .global_batch = b,
        .allreduce_dtype =
            std::string(allreduce_dtype_name(options_.data_parallel->options().allreduce_dtype))};
    // A last global batch with fewer rows than ranks would leave a rank
    // without a sample: it is not trained.
    if (const int64_t rest = n % b; rest > 0 && rest < ranks()) {
      --steps;
      r.data_parallel->dropped_rows = rest;
    }
  }
  double loss_sum = 0, run_ms = 0;
  int64_t loss_samples = 0, timed_steps = 0, timed_samples = 0;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t start = k * b, global_count = std::min(b, n - start);
    const RowShare share = rank_share(global_count, ranks(), rank());
    const int64_t count = share.count;
    Program& p = activate(count);
    const std::span<const int64_t> rows(order.data() + start + share.first,
                                        static_cast<size_t>(count));
    const double loss_weight =
        static_cast<double>(count * ranks()) / static_cast<double>(global_count);
    const std::vector<HostTensor> in = step_inputs(p, data, rows, loss_weight);
    if (p.exchange) p.exchange->begin_step();
    std::vector<HostTensor> out;
    // The step's run time; NaN for the profiled step (not a timed one).
    double ms = std::numeric_limits<double>::quiet_NaN();
    // ZeRO-1: the owners' updated weights into every rank, part of the step.
    double gather_ms = 0;
    if (step_ + 1 == profile_at_) {
      // The profiled step: each kernel waited for, so not a timed one.
      ProfiledStep ps{step_ + 1, epoch_ + 1, count, {}, {}, p.plan().devices};
      out = p.exec().run(in, ps.profile);
      ps.predicted = step_predictions(p.plan(), p.ran(), ps.profile);
      profiled_ = std::move(ps);
      if (sharded()) gather_ms = gather_weights(p);
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      out = p.run(in);
      if (sharded()) gather_ms = gather_weights(p);
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      run_ms += ms;
      ++timed_steps;
      timed_samples += global_count;  // every rank's rows, in the same time
    }
    const auto loss = static_cast<double>(scalar_of(out.at(p.tg.output(TrainingOutput::kLoss))));
    // A step whose forward overflowed has no loss to average.
    if (std::isfinite(loss)) {
      loss_sum += loss * static_cast<double>(count);
      loss_samples += count;
    }
    float guard[2];
    std::memcpy(guard, out.at(p.tg.output(TrainingOutput::kGuard)).data.data(), sizeof guard);
    StepRecord rec{
        step_ + 1, loss, scaler_.scale(), guard[0] != 0.0f, static_cast<double>(guard[1]), ms};
    if (p.exchange) {
      const StepCommunication c = p.exchange->step_communication();
      rec.comm_ms = c.comm_ms + gather_ms;
      rec.exposed_comm_ms = c.exposed_ms + gather_ms;
      DataParallelEpoch& d = *r.data_parallel;
      if (sharded()) {
        d.sharded_optimizer = true;
        d.allgather_bytes_per_step = gathered_.size();
        d.allgather_ms_per_step += gather_ms;
      }
      d.buckets = c.buckets;
      d.wire_bytes_per_step = c.wire_bytes;
      d.synchronized_per_step = c.synchronized;
      d.comm_ms_per_step += rec.comm_ms;
      d.exposed_comm_ms_per_step += rec.exposed_comm_ms;
    }
    r.records.push_back(rec);
    if (p.tg.has_output(TrainingOutput::kOverflow) && diagnostics_) {
      const HostTensor& stats = out.at(p.tg.output(TrainingOutput::kOverflow));
      std::vector<float> rows(stats.data.size() / sizeof(float));
      std::memcpy(rows.data(), stats.data.data(), rows.size() * sizeof(float));
      if (options_.data_parallel) reduce_overflow_stats(*options_.data_parallel, rows);
      const bool can_back_off =
          options_.loss_scale->kind == LossScaleKind::kDynamic && !scaler_.at_floor();
      if (auto event = diagnostics_->record(rec.step, rows, can_back_off))
        r.overflows.push_back(*event);
    }
    scaler_.update(rec.finite, rec.step);
#ifndef NDEBUG
    // Debug builds check every step what release builds check per epoch.
    if (options_.data_parallel)
      options_.data_parallel->require_agreement(
          "loss scale after step " + std::to_string(rec.step),
          std::to_string(scaler_.scale()) + (rec.finite ? " finite" : " overflow"));
#endif
    if (!rec.finite) ++r.overflow_steps;
    ++step_;
    // Overflowing at the lowest scale again and again: probe every layer
    // from now on, so that a run that gives up names the culprit.
    if (!diagnostics_ && scaler_.state().consecutive_overflows >= kDiagnoseAfterOverflows) {
      spdlog::info(
          "{} overflowed steps in a row at the lowest loss scale: probing every layer "
          "from step {} on (as --diagnose-overflow)",
          scaler_.state().consecutive_overflows, step_ + 1);
      r.replan_ms += enable_diagnostics();
    }
    if (scaler_.given_up()) throw TrainingStopped(stop_message(loss), std::move(r));
    if (options_.overflow.auto_fallback && diagnostics_) fall_back_due_layers(r);
    if (progress)
      progress(k + 1, steps, loss_sum / static_cast<double>(std::max<int64_t>(loss_samples, 1)));
  }
  ++epoch_;
  r.steps = steps;
  if (options_.data_parallel) {
    // The epoch's loss over every rank's samples; the per-step figures as
    // means. The loss scale must be the same everywhere (it follows from
    // the summed gradients' finite check alone).
    std::array<float, 2> totals{static_cast<float>(loss_sum), static_cast<float>(loss_samples)};
    options_.data_parallel->sum(totals);
    loss_sum = totals[0];
    loss_samples = static_cast<int64_t>(totals[1]);
    options_.data_parallel->require_agreement("loss scale after epoch " + std::to_string(epoch_),
                                              std::to_string(scaler_.scale()));
    if (steps > 0) {
      r.data_parallel->comm_ms_per_step /= static_cast<double>(steps);
      r.data_parallel->exposed_comm_ms_per_step /= static_cast<double>(steps);
      r.data_parallel->allgather_ms_per_step /= static_cast<double>(steps);
    }
  }
  r.loss = loss_samples > 0 ? loss_sum / static_cast<double>(loss_samples)
                            : std::numeric_limits<double>::quiet_NaN();
  r.step_ms = timed_steps > 0 ? run_ms / static_cast<double>(timed_steps) : 0.0;
  r.samples_per_s = run_ms > 0 ? static_cast<double>(timed_samples) / (run_ms / 1000.0) : 0.0;
  r.loss_scale = scaler_.scale();
  return r;
}

std::string Trainer::stop_message(double last_loss) const {
  std::string culprit = "; run with --diagnose-overflow to name the layer";
  if (diagnostics_ && !diagnostics_->events().empty()) {
    const OverflowEvent& e = diagnostics_->events().back();
    culprit = "; the first non-finite tensor was layer '" + e.layer + "' (" + e.op + ")'s " +
              std::string(probe_kind_name(e.kind)) + " '" + e.tensor + "'";
  }
  return "training stopped at step " + std::to_string(step_) + ": " +
         std::to_string(scaler_.state().consecutive_overflows) +
         " steps in a row had non-finite gradients with the loss scale at its lowest (" +
         options_.loss_scale->str() + ", scale " + std::to_string(scaler_.scale()) +
         "); the last loss was " + std::to_string(last_loss) + culprit;
}

void Trainer::fall_back_due_layers(EpochResult& r) {
  const std::vector<FallbackRecord> due = diagnostics_->due_for_fallback(options_.overflow, step_);
  if (due.empty()) return;
  for (const FallbackRecord& f : due) {
    diagnostics_->mark_fallback(f.layer);
    fallbacks_.push_back(f);
    options_.policy.overflow_fallback.push_back(f.layer);
    r.fallbacks.push_back(f);
  }
  const double ms = replan();
  r.replan_ms += ms;
  for (const FallbackRecord& f : due)
    spdlog::info(
        "step {}: layer '{}' {}: re-planned in f32 (overflow-fallback), step recompiled "
        "in {:.0f} ms",
        f.step, f.layer, f.detail, ms);
}

Evaluation Trainer::evaluate(const Dataset& data) {
  Evaluation ev;
  const int64_t n = data.size();
  if (n == 0) return ev;
  const std::vector<HostTensor> current = state();
  const bool ce = options_.graph.loss == LossKind::kCrossEntropy;
  double loss = 0;
  int64_t correct = 0;
  std::map<int64_t, std::optional<CompiledModel>> models;
  std::vector<int64_t> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  // Data parallelism: each rank evaluates its share of the rows (every
  // rank holds the same weights), and the sums are reduced after.
  const RowShare share = rank_share(n, ranks(), rank());
  const int64_t end = share.first + share.count;
  for (int64_t start = share.first; start < end; start += options_.batch) {
    const int64_t count = std::min(options_.batch, end - start);
    auto& model = models[count];
    if (!model) {
      const Graph g = with_state(with_batch_size(forward_, count), current);
      model.emplace(session_.compile(session_.plan(g, plan_request())));
    }
    const std::span<const int64_t> rows(all.data() + start, static_cast<size_t>(count));
    HostTensor x = gather_rows(data.inputs, rows);
    x.name = forward_.value(forward_.inputs()[0]).name;
    const std::vector<double> pred = to_doubles(model->run(std::span(&x, 1)).at(0));
    const std::vector<double> labels = to_doubles(gather_rows(data.labels, rows));
    if (ce) {
      const auto classes = static_cast<int64_t>(pred.size()) / count;
      for (int64_t r = 0; r < count; ++r) {
        const double* row = pred.data() + r * classes;
        const int64_t best = std::max_element(row, row + classes) - row;
        const double m = row[best];
        double s = 0;
        for (int64_t c = 0; c < classes; ++c) s += std::exp(row[c] - m);
        const auto label = static_cast<int64_t>(labels[static_cast<size_t>(r)]);
        loss += -(row[label] - m - std::log(s));
        correct += best == label ? 1 : 0;
      }
    } else {
      for (size_t i = 0; i < pred.size(); ++i)
        loss += (pred[i] - labels[i]) * (pred[i] - labels[i]) /
                static_cast<double>(pred.size() / static_cast<size_t>(count));
    }
  }
  if (options_.data_parallel) {
    std::array<float, 2> totals{static_cast<float>(loss), static_cast<float>(correct)};
    options_.data_parallel->sum(totals);
    loss = totals[0];
    correct = static_cast<int64_t>(totals[1]);
  }
  ev.samples = n;
  ev.loss = loss / static_cast<double>(n);
  ev.accuracy = ce ? static_cast<double>(correct) / static_cast<double>(n) : 0.0;
  return ev;
}

std::vector<HostTensor> Trainer::state() const {
  std::vector<HostTensor> masters;
  if (active_->copies_held_somewhere()) masters = gather_masters(*active_);
  std::vector<HostTensor> out;
  for (size_t i = 0, k = 0; i < active_->tg.state.size(); ++i) {
    const bool weight = active_->tg.state[i].role == StateRole::kWeight;
    HostTensor t = weight && !masters.empty() ? std::move(masters[k]) : active_->read_state(i);
    k += weight ? 1 : 0;
    t.name = active_->tg.state[i].name;
    out.push_back(std::move(t));
  }
  return out;
}

void Trainer::check_state(const std::vector<HostTensor>& state) const {
  const auto& entries = active_->tg.state;
  if (state.size() != entries.size())
    throw std::invalid_argument("the state has " + std::to_string(state.size()) +
                                " tensors, the training step " + std::to_string(entries.size()));
  for (size_t i = 0; i < state.size(); ++i) {
    const TensorType& want =
        active_->tg.step.value(active_->tg.step.inputs()[entries[i].binding.input]).type;
    if (state[i].name != entries[i].name || state[i].type != want)
      throw std::invalid_argument("state tensor " + std::to_string(i) + " is '" + state[i].name +
                                  "' " + shape_str(state[i].type.shape) + ", expected '" +
                                  entries[i].name + "' " + shape_str(want.shape));
  }
}

void Trainer::set_state(const std::vector<HostTensor>& state) {
  check_state(state);
  for (size_t i = 0; i < state.size(); ++i) active_->write_state(i, state[i].data);
}

std::string Trainer::run_options() const {
  // The keys and their spelling are those of every checkpoint written so
  // far: a resume compares this text with the checkpoint's.
  const OptimizerOptions& op = options_.graph.optimizer;
  return nlohmann::json{{"optimizer", optimizer_name(op.kind)},
                        {"lr", op.lr},
                        {"momentum", op.momentum},
                        {"nesterov", op.nesterov},
                        {"weight_decay", op.weight_decay},
                        // The global batch: a run resumed on another
                        // number of ranks keeps it (and the data order).
                        {"batch", options_.batch * ranks()},
                        {"loss", options_.graph.loss == LossKind::kMse ? "mse" : "cross-entropy"},
                        {"amp", amp_level_name(options_.policy.level)},
                        {"dtype", dtype_name(options_.policy.half)},
                        {"freeze", options_.graph.freeze}}
      .dump();
}

Checkpoint Trainer::checkpoint() const {
  Checkpoint c;
  c.state = state();
  c.epoch = epoch_;
  c.step = step_;
  c.seed = options_.seed;
  c.model = model_fingerprint_;
  c.options = run_options();
  c.loss_scale_schedule = scaler_.options().str();
  c.loss_scale = scaler_.state();
  c.fallbacks = fallbacks_;
  c.fallback_windows = fallback_windows();
  return c;
}

void Trainer::restore(const Checkpoint& c, LossScaleOnRestore loss_scale) {
  // Everything is checked before anything changes. The texts name the
  // CLI's flags: `ampx train --resume` is where a user meets them.
  if (c.model != model_fingerprint_)
    throw std::invalid_argument("the checkpoint is of another model");
  if (const std::string mine = run_options(); c.options != mine)
    throw std::invalid_argument("the checkpoint was written with other options (" + c.options +
                                ")");
  if (c.seed != options_.seed)
    throw std::invalid_argument("the checkpoint was written with --seed " + std::to_string(c.seed));
  const std::string schedule = scaler_.options().str();
  if (loss_scale == LossScaleOnRestore::kResume && c.loss_scale_schedule != schedule)
    throw std::invalid_argument("the checkpoint's loss scale is " + c.loss_scale_schedule +
                                ", this run's " + schedule +
                                " (--reset-loss-scale starts the new schedule afresh)");
  check_fallback_layers(c.fallbacks);
  // By name: a sharded run's checkpoint holds every rank's moments.
  const std::vector<HostTensor> state = state_by_name(c.state);
  check_state(state);  // a fallback re-plans precisions, never the state's types
  // The layers moved to f32 stay there: the step is planned again before
  // the state goes in.
  set_fallbacks(c.fallbacks);
  if (diagnostics_) diagnostics_->set_windows(c.fallback_windows);
  set_state(state);
  epoch_ = c.epoch;
  step_ = c.step;
  if (loss_scale == LossScaleOnRestore::kResume) scaler_.set_state(c.loss_scale);
}

Graph Trainer::trained_model() const {
  return with_state(forward_, state());
}

const AmpPlan& Trainer::plan() const {
  return programs_.at(options_.batch)->plan();
}

PlanRequest Trainer::plan_request() const {
  // The session's devices, fallback, cost step and tuned plans; quiet, for
  // the step is planned again per batch size, for evaluation and after
  // every fallback.
  return PlanRequest{
      .policy = options_.policy,
      .capabilities = options_.capability_blind ? CapabilityUse::kBlind : CapabilityUse::kAware,
      .purpose = PlanPurpose::kRun,
      .selection = selection_,
      .logging = PlanLogging::kQuiet};
}

const ExecutorStats* Trainer::step_stats() const {
  return &programs_.at(options_.batch)->exec().stats();
}

const Graph& Trainer::step_graph() const {
  return programs_.at(options_.batch)->ran().graph;
}

RunProfile Trainer::profile_step(const Dataset& data) {
  if (data.size() < options_.batch)
    throw std::invalid_argument("profile_step: fewer samples than a batch");
  Program& p = activate(options_.batch);
  std::vector<int64_t> rows(static_cast<size_t>(options_.batch));
  std::iota(rows.begin(), rows.end(), 0);
  const std::vector<HostTensor> in = step_inputs(p, data, rows);
  RunProfile profile;
  if (p.exchange) p.exchange->begin_step();
  p.exec().run(in, profile);
  if (sharded()) gather_weights(p);
  ++step_;
  return profile;
}

void Trainer::profile_at_step(int64_t step) {
  if (step < 1) throw std::invalid_argument("the profiled step must be 1 or later");
  if (step <= step_)
    throw std::invalid_argument("step " + std::to_string(step) +
                                " has run already (the run is at step " + std::to_string(step_) +
                                ")");
  profile_at_ = step;
  profiled_.reset();
}

const TrainingGraph& Trainer::training_graph() const {
  return programs_.at(options_.batch)->tg;
}

void check_dataset(const Dataset& data, const std::string& what, int64_t classes) {
  const int64_t n = data.size();
  if (data.inputs.type.dtype != DType::kF32)
    throw std::invalid_argument(what + ": inputs must be f32, got " +
                                std::string(dtype_name(data.inputs.type.dtype)));
  if (data.labels.type.shape.empty() || data.labels.type.shape[0] != n)
    throw std::invalid_argument(what + ": " + std::to_string(n) + " samples but " +
                                (data.labels.type.shape.empty()
                                     ? std::string("no")
                                     : std::to_string(data.labels.type.shape[0])) +
                                " labels");
  if (const auto bad = first_nonfinite(data.inputs)) {
    const size_t count = data.inputs.data.size() / dtype_size(data.inputs.type.dtype);
    const size_t row = n > 0 ? count / static_cast<size_t>(n) : 0;
    throw std::invalid_argument(what + ": sample " + std::to_string(bad->index / row) + " has a " +
                                (bad->is_nan ? "NaN" : "infinite") + " value");
  }
  if (classes > 0) {
    if (data.labels.type.dtype != DType::kI64)
      throw std::invalid_argument(what + ": labels must be i64, got " +
                                  std::string(dtype_name(data.labels.type.dtype)));
    if (data.labels.type.shape.size() != 1)
      throw std::invalid_argument(what + ": labels must be one class index per sample [N], got " +
                                  shape_str(data.labels.type.shape));
    const auto* l = reinterpret_cast<const int64_t*>(data.labels.data.data());
    for (int64_t i = 0; i < n; ++i)
      if (l[i] < 0 || l[i] >= classes)
        throw std::invalid_argument(what + ": label " + std::to_string(l[i]) + " of sample " +
                                    std::to_string(i) + " is outside [0, " +
                                    std::to_string(classes) + ")");
  }
}

}  // namespace ampx::train
