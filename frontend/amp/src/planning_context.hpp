// Internal to the planner (frontend/amp/src): what the steps of one
// planning pass share: the devices and their memoised answers, the plan
// being built, the rewriter (home dtypes so far) and where each value lives.
#pragma once

#include "plan_queries.hpp"
#include "rewriter.hpp"

#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace ampx::planner_detail {

// Where a node goes and why (the placement step).
struct Placed {
  int device = 0;
  PlacementReason reason = PlacementReason::kFirstChoice;
  std::string note;
};

class PlanningContext {
 public:
  // Fills plan.devices, device_id and fallback_only from `devices`; throws
  // std::invalid_argument for an empty list, a fallback-only device that
  // is not last, or no device besides the fallback.
  PlanningContext(const Graph& g, std::span<const PlanDevice> devices, AmpPlan& plan,
                  bool build_graph);
  PlanningContext(const PlanningContext&) = delete;
  PlanningContext& operator=(const PlanningContext&) = delete;

  const Graph& graph() const { return g_; }
  std::span<const PlanDevice> devices() const { return devices_; }
  int listed() const { return listed_; }      // devices that are not fallback-only
  int fallback() const { return fallback_; }  // the fallback-only device, or -1
  AmpPlan& plan() { return plan_; }
  Rewriter& rewriter() { return rw_; }
  std::vector<int>& value_device() { return value_device_; }

  // The answer of device k for node n with float tensors in `d` (kInvalid:
  // a non-float node, with its inputs' home dtypes).
  CapabilitySource::Answer ask(int k, const Node& n, DType d);
  // Predicted time of node n on device k in dtype d, with the copies and
  // Casts its inputs need there; < 0 when the device has no estimate.
  double cost_on(int k, const Node& n, DType d);
  // The first device by order, or device k as a fallback naming the
  // listed devices passed over.
  Placed by_order(int k) const;
  // A device note stored once in AmpPlan::notes; its index.
  int32_t intern_note(const std::string& note);

 private:
  // A Cast goes where its source is computed (a narrowing Cast then halves
  // the bytes a copy moves), else where it is read, else on the first device
  // of the plan that runs it; throws std::runtime_error naming the value and
  // every refusal when none does. Memoised by (candidate devices, dtypes):
  // Casts repeat across blocks.
  int cast_device(ValueId v, DType from, DType to, int consumer);

  const Graph& g_;
  std::span<const PlanDevice> devices_;
  AmpPlan& plan_;
  int listed_ = 0, fallback_ = -1;
  std::vector<MemoizedQuery> queries_;
  LoweredNode lowered_;
  std::vector<DType> ins_, outs_;
  QueryLowering cost_lowering_;
  // Home device of each source value: its producer's; -1 for graph inputs
  // and constants (uploaded where they are read).
  std::vector<int> value_device_;
  std::unordered_map<uint64_t, int> cast_device_memo_;
  std::unordered_map<std::string, int32_t> note_ids_;
  Rewriter rw_;  // last: its Cast callback uses the members above
};

}  // namespace ampx::planner_detail
