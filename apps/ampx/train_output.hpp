// What `ampx train --format json` and Python's Trainer say about overflows
// (docs/TRAINING.md, "Overflow diagnostics": an overflowed step, a layer
// moved to f32, the per-layer summary) and about a profiled step, in one
// place so that the two shells name the same fields.
#pragma once

#include <ampx/session/trainer.hpp>
#include <ampx/train/fallback_record.hpp>
#include <ampx/train/overflow_diagnostics.hpp>

#include <nlohmann/json.hpp>

#include <vector>

namespace ampx::cli {

// An overflowed step: the layer that went non-finite first, the tensor,
// its non-finite share and amax against its dtype's largest value.
nlohmann::json overflow_event_json(const train::OverflowEvent& e);
// A layer the automatic fallback moved to f32.
nlohmann::json fallback_json(const train::FallbackRecord& f);
// An epoch record's "overflows" (every overflowed step, each as above),
// "fallbacks" and, when a layer moved, "replan_ms": what the epoch's
// diagnostics found (added only when the run has them).
void add_epoch_overflows(nlohmann::json& record, const train::EpochResult& r);
// The `done` record's "diagnostics": every layer's summary (most first
// overflows first) and the fallbacks so far.
nlohmann::json overflow_diagnostics_json(const train::OverflowDiagnostics& d,
                                         const std::vector<train::FallbackRecord>& fallbacks);

// A data-parallel epoch's communication (`--data-parallel`): ranks, global
// batch, buckets, the all-reduce dtype, payload bytes per step, the
// all-reduces' time per step, the part the step waited for, the overlap
// (1 - waited / all-reduce time) and the rows of a too-small last batch
// left out; with --shard-optimizer the all-gather's bytes and time.
nlohmann::json data_parallel_epoch_json(const train::DataParallelEpoch& d);

// `--shard-optimizer`'s state on this rank against the unsharded run: the
// text line, and the `done` record's "sharded_optimizer".
std::string sharded_memory_line(const train::ShardedMemory& m);
nlohmann::json sharded_memory_json(const train::ShardedMemory& m);

// `--profile-step`'s step (the `profile` event): its per-node table as
// `ampx run --per-node --format json` has it.
nlohmann::json profiled_step_json(const train::ProfiledStep& p);

}  // namespace ampx::cli
