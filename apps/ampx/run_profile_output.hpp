// `ampx run --per-node` and `--trace FILE`: profiled runs of the executor,
// each step's prediction taken from the plan, shown as a table (per node,
// then per op), as the `per_node` member of `ampx run --format json`
// (docs/cli-json.md) and as a Chrome trace-event file.
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/run_profile.hpp>
#include <ampx/tune/tuner.hpp>

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace ampx::cli {

// A trace path must be writable before anything runs: UsageError naming it.
void check_trace_path(const std::string& path);

void print_per_node(std::ostream& out, const ProfileSummary& s,
                    const std::vector<std::string>& device_ids);
nlohmann::json per_node_to_json(const ProfileSummary& s,
                                const std::vector<std::string>& device_ids);

}  // namespace ampx::cli
