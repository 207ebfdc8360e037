// What a tuned plan is stored under (docs/TUNING.md): the model's content
// hash, the devices' fingerprints in plan order and the plan options. A
// changed model, device, plugin version or option is a different key, so a
// stored plan is never applied to something it was not measured for.
#pragma once

#include <ampx/amp/placement.hpp>
#include <ampx/amp/planner.hpp>
#include <ampx/amp/policy.hpp>
#include <ampx/exec/selected_devices.hpp>
#include <ampx/ir/graph.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ampx {

// 16 hex digits (FNV-1a 64) over everything that makes the graph what it
// is: inputs and outputs, values (names, dtypes, shapes, constant bytes),
// nodes (names, ops, attributes, wiring). Two loads of one file agree.
std::string graph_content_hash(const Graph& graph);

struct TunedPlanKey {
  std::string model_hash;  // empty in a lookup key: find_tuned_plan hashes when it must
  std::string devices;     // fingerprints in selection order, ','-joined
  std::string
      options;  // "amp=O2;dtype=bf16;white=...;black=...;overrides=...;place=...;devices=..."
};
TunedPlanKey tuned_plan_key(const Graph& graph, const AmpPolicy& policy,
                            const DeviceSelection& selection, std::span<const DevicePin> pins);
// The same without the model hash, for find_tuned_plan: hashing a large
// graph costs milliseconds (FNV-1a over every name, shape and weight
// byte), and most databases hold no plan the key could match.
TunedPlanKey tuned_plan_lookup_key(const AmpPolicy& policy, const DeviceSelection& selection,
                                   std::span<const DevicePin> pins);

// A stored tuned plan that matches the key: the source nodes it keeps f32,
// and a line saying which plan it is.
struct StoredTuning {
  std::vector<std::string> f32_nodes;
  std::string kept;  // "tuned", "untuned" or "O0"
  // The kept plan's verification: median ratio to O0 and the noise bound
  // (< 0 when the record lacks them).
  double ratio_to_o0 = -1;
  double noise = -1;
  std::string
      note;  // "tuned plan of 2026-12-01T10:00:00Z (kept: tuned, 3 nodes f32 by measurement)"
};
// Looks the key up in the database at `db_path` (nullopt: the default
// path). A key without model_hash (tuned_plan_lookup_key) gets the graph's
// hash only when the database holds a plan for its devices and options or
// for `model_name`: none otherwise, so none is found. None stored: nullopt, with an info-level note
// when plans for the same model name exist under other keys (model, device or options changed). A
// stored plan that cannot be used (unreadable JSON, a node the graph lacks) is ignored with a
// warning; never fatal, never misapplied.
std::optional<StoredTuning> find_tuned_plan(const Graph& graph, const std::string& model_name,
                                            const TunedPlanKey& key,
                                            const std::optional<std::string>& db_path);

}  // namespace ampx
