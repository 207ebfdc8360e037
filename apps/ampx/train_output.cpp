#include "train_output.hpp"

#include "run_profile_output.hpp"

#include <fmt/format.h>

namespace ampx::cli {
namespace {

nlohmann::json layer_json(const train::LayerOverflowSummary& l) {
  return {{"layer", l.layer},
          {"op", l.op},
          {"dtype", dtype_name(l.dtype)},
          {"first_overflows", l.first_overflows},
          {"counted_overflows", l.counted_overflows},
          {"nonfinite_steps", l.nonfinite_steps},
          {"activation_amax", l.activation_amax},
          {"gradient_amax", l.gradient_amax},
          {"dtype_max", train::dtype_max_finite(l.dtype)},
          {"underflow_share", l.underflow_share},
          {"fallback", l.fallback}};
}

}  // namespace

nlohmann::json overflow_event_json(const train::OverflowEvent& e) {
  return {{"step", e.step},
          {"layer", e.layer},
          {"op", e.op},
          {"kind", train::probe_kind_name(e.kind)},
          {"tensor", e.tensor},
          {"nonfinite_share", e.nonfinite_share},
          {"amax", e.amax},
          {"dtype", dtype_name(e.dtype)},
          {"dtype_max", e.dtype_max},
          {"counts_for_fallback", e.counts}};
}

nlohmann::json fallback_json(const train::FallbackRecord& f) {
  return {{"layer", f.layer},
          {"cause", f.cause},
          {"step", f.step},
          {"detail", f.detail},
          {"reason", "overflow-fallback"}};
}

void add_epoch_overflows(nlohmann::json& record, const train::EpochResult& r) {
  record["overflows"] = nlohmann::json::array();
  for (const train::OverflowEvent& e : r.overflows)
    record["overflows"].push_back(overflow_event_json(e));
  record["fallbacks"] = nlohmann::json::array();
  for (const train::FallbackRecord& f : r.fallbacks)
    record["fallbacks"].push_back(fallback_json(f));
  if (!r.fallbacks.empty()) record["replan_ms"] = r.replan_ms;
}

nlohmann::json overflow_diagnostics_json(const train::OverflowDiagnostics& d,
                                         const std::vector<train::FallbackRecord>& fallbacks) {
  nlohmann::json layers = nlohmann::json::array();
  for (const train::LayerOverflowSummary& l : d.summary()) layers.push_back(layer_json(l));
  nlohmann::json fb = nlohmann::json::array();
  for (const train::FallbackRecord& f : fallbacks) fb.push_back(fallback_json(f));
  return {{"underflow_below", train::dtype_min_normal(d.half())},
          {"half", dtype_name(d.half())},
          {"layers", layers},
          {"fallbacks", fb}};
}

nlohmann::json profiled_step_json(const train::ProfiledStep& p) {
  return {{"schema", "ampx.train/1"},
          {"event", "profile"},
          {"step", p.step},
          {"epoch", p.epoch},
          {"rows", p.rows},
          {"devices", p.devices},
          {"per_node", per_node_to_json(summarize_profiles({p.profile}, p.predicted), p.devices)}};
}

nlohmann::json data_parallel_epoch_json(const train::DataParallelEpoch& d) {
  const double overlap =
      d.comm_ms_per_step > 0 ? 1.0 - d.exposed_comm_ms_per_step / d.comm_ms_per_step : 0.0;
  return {{"ranks", d.ranks},
          {"global_batch", d.global_batch},
          {"buckets", d.buckets},
          {"allreduce_dtype", d.allreduce_dtype},
          {"wire_bytes_per_step", d.wire_bytes_per_step},
          {"comm_ms_per_step", d.comm_ms_per_step},
          {"exposed_comm_ms_per_step", d.exposed_comm_ms_per_step},
          {"overlap", overlap},
          {"synchronized_per_step", d.synchronized_per_step},
          {"dropped_rows", d.dropped_rows},
          {"sharded_optimizer", d.sharded_optimizer},
          {"allgather_bytes_per_step", d.allgather_bytes_per_step},
          {"allgather_ms_per_step", d.allgather_ms_per_step}};
}

namespace {
double mib(uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}
}  // namespace

std::string sharded_memory_line(const train::ShardedMemory& m) {
  return fmt::format(
      "sharded optimizer (ZeRO-1): rank {} of {} owns {} of {} weights ({:.2f} of {:.2f} MiB of "
      "f32 masters); it keeps {:.2f} MiB of f32 weights, {} other ranks' weights as 16-bit "
      "copies ({:.2f} MiB), {:.2f} MiB of optimizer state against {:.2f} MiB unsharded; all "
      "state {:.2f} MiB against {:.2f} MiB",
      m.rank, m.ranks, m.owned_weights, m.weights, mib(m.owned_weight_bytes), mib(m.weight_bytes),
      mib(m.master_bytes), m.held_16bit, mib(m.working_copy_bytes), mib(m.optimizer_bytes),
      mib(m.unsharded_optimizer_bytes), mib(m.state_bytes), mib(m.unsharded_state_bytes));
}

nlohmann::json sharded_memory_json(const train::ShardedMemory& m) {
  return {{"rank", m.rank},
          {"ranks", m.ranks},
          {"owned_weights", m.owned_weights},
          {"weights", m.weights},
          {"held_16bit", m.held_16bit},
          {"owned_weight_bytes", m.owned_weight_bytes},
          {"master_bytes", m.master_bytes},
          {"working_copy_bytes", m.working_copy_bytes},
          {"weight_bytes", m.weight_bytes},
          {"optimizer_bytes", m.optimizer_bytes},
          {"unsharded_optimizer_bytes", m.unsharded_optimizer_bytes},
          {"state_bytes", m.state_bytes},
          {"unsharded_state_bytes", m.unsharded_state_bytes}};
}

}  // namespace ampx::cli
