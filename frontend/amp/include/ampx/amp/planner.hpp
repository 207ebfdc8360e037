// The AMP planner: policy -> intended precision per node -> capability query
// on the chosen device -> effective precision -> a rewritten graph with the
// fewest Casts. See docs/PLANNER.md for the rules and reasons.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/amp/placement.hpp>
#include <ampx/amp/policy.hpp>
#include <ampx/capability/capability_source.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/ir/graph.hpp>

#include <span>
#include <string>
#include <vector>

namespace ampx {

// ... and why it ended where it did (effective step).
enum class EffectiveReason {
  kAsIntended,      // f32 intended, or 16-bit intended and the device is native
  kNoNativeKernel,  // 16-bit intended, the device only emulates it
  kUnsupported16,   // 16-bit intended, the device cannot run it in 16-bit at all
  kForcedEmulated,  // capability-blind plan only: 16-bit on an emulated kernel
  kCost,            // native in 16-bit, but f32 is predicted faster (Casts included)
  kDataMovement,    // data movement the device only emulates in 16-bit: still 16-bit,
                    // since it is exact and a Cast pair around it costs more
  kTuned,           // a stored tuned plan keeps it f32: measured faster so in context
};

std::string_view intent_reason_name(IntentReason r);
std::string_view effective_reason_name(EffectiveReason r);

struct NodePlan {
  NodeId node = kNone;  // id in the source graph
  std::string name;
  OpType op{};
  std::string origin;             // Node::origin: the imported op(s) it stands for
  DType intended = DType::kF32;   // compute dtype the policy wants
  DType effective = DType::kF32;  // compute dtype the plan uses
  IntentReason intent_reason{};
  EffectiveReason effective_reason{};
  ampx_support support_16bit = AMPX_SUPPORT_UNSUPPORTED;  // the device's answer, when asked
  // The device's note on its 16-bit answer: an index into AmpPlan::notes
  // (-1: none). Notes repeat across nodes, so each is stored once.
  int32_t note = -1;
  // One word for tables: the intent reason unless the device changed it.
  std::string reason() const;
  bool is_float_node = false;
  // Cost-aware plans: predicted time of this node as planned, and (for
  // nodes the cost step decided) in f32 and in 16-bit; < 0 unknown.
  double predicted_us = -1;
  double time_f32_us = -1;
  double time_16_us = -1;
  // Where predicted_us came from: an in-context measurement, probe data or
  // the plugin's hints (kNone without a prediction).
  capability::CostOrigin cost_origin = capability::CostOrigin::kNone;
  // Placement: index into AmpPlan::devices, why there, and for fallbacks
  // the devices that could not run it ("unsupported on vulkan:0").
  int device = 0;
  PlacementReason placement = PlacementReason::kFirstChoice;
  std::string placement_note;
  std::string placement_text() const;  // "first-choice", "fallback: unsupported on vulkan:0"
};

struct CastRecord {
  std::string name;   // the Cast node in the planned graph
  std::string value;  // source value name
  DType from = DType::kF32, to = DType::kF32;
  bool on_constant = false;  // weights: folded once at load by the executor
  int device = 0;            // where it runs (AmpPlan::devices index)
  // Cost-aware plans: predicted time per run; < 0 for weight Casts (folded
  // at load) and without a cost model.
  double predicted_us = -1;
  capability::CostOrigin cost_origin = capability::CostOrigin::kNone;
};

struct PlanSummary {
  int nodes = 0;
  int float_nodes = 0;
  int intended_16bit = 0;
  int effective_16bit = 0;
  int kept_fp32_no_native = 0;  // no native 16-bit kernel (emulated or unsupported)
  int kept_fp32_cost = 0;       // native, but f32 predicted faster
  int kept_fp32_tuned = 0;      // a stored tuned plan keeps them f32 (measured)
  int casts = 0;
  int casts_on_constants = 0;
  // Placement (multi-device plans; zero otherwise).
  int fallbacks = 0;                  // nodes not on their first-choice device for lack of support
  int placed_by_cost = 0;             // reason `cost`
  int pinned = 0;                     // reason `override`
  int copies = 0;                     // per run, one per value and destination device
  uint64_t copy_bytes = 0;            // per run
  std::vector<int> nodes_per_device;  // source nodes, by AmpPlan::devices index
};

struct AmpPlan {
  std::string device_id;             // the device, or the list joined by ','
  std::vector<std::string> devices;  // placement targets in order (one for a single device)
  std::vector<bool> fallback_only;   // per device: PlanDevice::fallback_only
  AmpPolicy policy;
  Graph graph;                  // rewritten: effective dtypes and the Casts (if built)
  std::vector<NodePlan> nodes;  // one per source node, in execution order
  std::vector<CastRecord> casts;
  std::vector<CopyRecord> copies;  // per run, at device boundaries (plan_copies)
  std::vector<std::string> notes;  // distinct device notes, see NodePlan::note
  PlanSummary summary;
  // Cost-aware plans: predicted time per run (kernels and per-run Casts;
  // weight Casts are folded at load and free), and where the numbers come
  // from (CostModel::source()). predicted_us < 0 without a cost model.
  double predicted_us = -1;
  std::string cost_source;
  // Set when the plan applies a stored tuned plan (`ampx tune`): what it
  // was and when ("tuned plan of 2026-12-01T10:00:00Z: 3 nodes f32 by
  // measurement"); empty otherwise.
  std::string tuned;
  // Predictions by origin (kernels and per-run Casts of the built graph).
  int predicted_measured = 0, predicted_probe = 0, predicted_hint = 0;

  std::string_view note_of(const NodePlan& n) const {
    return n.note < 0 ? std::string_view{} : std::string_view(notes[static_cast<size_t>(n.note)]);
  }
};

struct PlanOptions {
  // Build AmpPlan::graph, the rewritten graph an Executor runs. Reports and
  // `ampx plan` need only the decisions, and skip it. Multi-device plans
  // always have it: their copies are found on it.
  bool build_graph = true;
  // What a framework that trusts the policy string does: a node the policy
  // sends to 16-bit runs in 16-bit whenever the device can run it at all,
  // emulated kernels included (reason `forced-emulated`); only `unsupported`
  // keeps it f32. For side-by-side comparisons (`ampx run
  // --capability-blind`), never the default.
  bool capability_blind = false;
  // Cost-aware planning (docs/PLANNER.md): with a cost model, the nodes that
  // would run natively in 16-bit are chosen for the whole graph by a minimum
  // cut over predicted kernel and Cast times; the others get reason `cost`.
  // Ignored by capability-blind plans (they only get predictions).
  capability::CostModel* cost = nullptr;
  // A stored tuned plan's choice (docs/TUNING.md): these source nodes stay
  // f32 (reason `tuned`) and no cost step runs; every other node follows
  // the policy and the devices' answers. Names must exist in the graph
  // (std::invalid_argument otherwise: the caller checks the key first).
  const std::vector<std::string>* tuned_f32 = nullptr;
};

// `--dtype auto`: which 16-bit type to plan with on this device. Plans the
// policy's nodes in f16 and in bf16 (decisions only) and takes the one with
// more nodes effectively 16-bit, f16 on a tie (more mantissa); when neither
// has any, f16 is returned with `any_native` false: the plan stays f32
// (every node `no-native-kernel`), which is the honest answer.
struct HalfChoice {
  DType half = DType::kF16;
  int f16_effective = 0;
  int bf16_effective = 0;
  bool any_native = false;
};
// Fills AmpPlan::predicted_us, cost_source and each NodePlan::predicted_us
// from `cost`, for a plan whose graph was built (any plan: cost-aware ones
// get this already). Per-run Casts count; weight Casts folded at load do not.
void predict_plan(AmpPlan& plan, capability::CostModel& cost);
// The same with one model per AmpPlan::devices entry (null: no prediction
// for that device's nodes).
void predict_plan(AmpPlan& plan, std::span<capability::CostModel* const> costs);

HalfChoice choose_half_dtype(const Graph& graph, const AmpPolicy& policy, CapabilitySource& device);
// The same across devices: the nodes counted are those the placement puts
// on a device that runs them natively in that type.
HalfChoice choose_half_dtype(const Graph& graph, const AmpPolicy& policy,
                             std::span<const PlanDevice> devices);

// Plans `graph` for `device`. Throws std::runtime_error naming the node when
// the device cannot run some node even in f32. Linear in graph size.
AmpPlan plan_amp(const Graph& graph, const AmpPolicy& policy, CapabilitySource& device,
                 const PlanOptions& options = {});

// Plans `graph` across `devices` (in preference order; docs/PLACEMENT.md):
// each node's device and precision are decided together, the planned graph's
// nodes carry Node::device, and AmpPlan::copies lists the values that cross
// devices. `options.cost` is ignored: each device brings its own cost model.
// `pins` put matching nodes on a device (later pins win).
// Throws std::runtime_error listing every node no device can run (with no
// fallback_only device, that is the --no-fallback error), and
// std::invalid_argument for a pin that matches no node. Linear in graph size
// times the number of devices.
AmpPlan plan_amp(const Graph& graph, const AmpPolicy& policy, std::span<const PlanDevice> devices,
                 const PlanOptions& options = {}, std::span<const DevicePin> pins = {});

}  // namespace ampx
