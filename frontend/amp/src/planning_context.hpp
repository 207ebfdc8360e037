// Internal to the planner (frontend/amp/src): what the steps of one
// planning pass share: the devices and their memoised answers, the plan
// being built, the rewriter (home dtypes so far) and where each value lives.
#pragma once

#include "node_classes.hpp"
#include "plan_queries.hpp"
#include "rewriter.hpp"

#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>

#include <deque>
#include <memory>
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

// What every pass of one planning call shares (a cost-aware plan makes two,
// then the cost step, its explanations and the predictions ask again): the
// source graph's node classes, each device's answers and predictions by
// class, the topological order. Made once per planning call.
class PlanQueries {
 public:
  // Throws std::invalid_argument for an empty device list, a fallback-only
  // device that is not last, or no device besides the fallback.
  // `devices[k].cost` (may be null) is memoised here: devices() and costs(k)
  // hand out the memoised models.
  PlanQueries(const Graph& g, std::span<const PlanDevice> devices);
  PlanQueries(const PlanQueries&) = delete;
  PlanQueries& operator=(const PlanQueries&) = delete;

  const NodeClasses& classes() const { return classes_; }
  ClassAnswers& answers(int k) { return answers_[static_cast<size_t>(k)]; }
  // Device k's predictions by class; null without a cost model.
  ClassCosts* costs(int k) { return class_costs_[static_cast<size_t>(k)].get(); }
  // The devices with their cost models memoised.
  std::span<const PlanDevice> devices() const { return devices_; }
  bool any_cost() const { return any_cost_; }
  // The source graph's topological order, made on first use.
  const std::vector<NodeId>& order();
  // load_time_nodes() of the source graph, made on first use.
  const std::vector<bool>& at_load();

 private:
  const Graph& g_;
  std::vector<PlanDevice> devices_;  // before classes_: the list is checked first
  NodeClasses classes_;
  std::deque<ClassAnswers> answers_;
  std::deque<MemoizedCost> memo_;
  std::vector<std::unique_ptr<ClassCosts>> class_costs_;
  bool any_cost_ = false;
  std::vector<NodeId> order_;
  bool order_made_ = false;
  std::vector<bool> at_load_;
  bool at_load_made_ = false;
};

class PlanningContext {
 public:
  // Fills plan.devices, device_id and fallback_only from the devices of
  // `queries` (which checked the list); `queries` outlives it.
  PlanningContext(const Graph& g, PlanQueries& queries, AmpPlan& plan, bool build_graph,
                  PassDetail detail);
  PlanningContext(const PlanningContext&) = delete;
  PlanningContext& operator=(const PlanningContext&) = delete;

  const Graph& graph() const { return g_; }
  std::span<const PlanDevice> devices() const { return devices_; }
  int listed() const { return listed_; }      // devices that are not fallback-only
  int fallback() const { return fallback_; }  // the fallback-only device, or -1
  AmpPlan& plan() { return plan_; }
  Rewriter& rewriter() { return rw_; }
  std::vector<int>& value_device() { return value_device_; }

  // The answer of device k for node n (of the source graph) with float
  // tensors in `d` (kInvalid: a non-float node, with its inputs' home
  // dtypes). Valid until the next ask.
  const CapabilitySource::Answer& ask(int k, const Node& n, DType d);
  // Predicted time of node n on device k in dtype d, with the copies and
  // Casts its inputs need there; < 0 when the device has no estimate.
  double cost_on(int k, const Node& n, DType d);
  // The first device by order, or device k as a fallback naming the
  // listed devices passed over.
  Placed by_order(int k) const;
  // The Casts' source values, in AmpPlan::casts order.
  const std::vector<ValueId>& cast_sources() const { return rw_.cast_sources(); }
  // A device note stored once in AmpPlan::notes; its index.
  int32_t intern_note(const std::string& note);

 private:
  // The id of node n of the source graph (n is a reference into it;
  // std::logic_error otherwise).
  NodeId id_of(const Node& n) const;
  // A Cast goes where its source is computed (a narrowing Cast then halves
  // the bytes a copy moves), else where it is read, else on the first device
  // of the plan that runs it; throws std::runtime_error naming the value and
  // every refusal when none does. Memoised by (candidate devices, dtypes):
  // Casts repeat across blocks.
  int cast_device(ValueId v, DType from, DType to, int consumer);

  const Graph& g_;
  PlanQueries& queries_;
  std::span<const PlanDevice> devices_;
  AmpPlan& plan_;
  int listed_ = 0, fallback_ = -1;
  LoweredNode lowered_;
  std::vector<DType> ins_, outs_;
  CapabilitySource::Answer scratch_;
  // Home device of each source value: its producer's; -1 for graph inputs
  // and constants (uploaded where they are read).
  std::vector<int> value_device_;
  std::unordered_map<uint64_t, int> cast_device_memo_;
  std::unordered_map<std::string, int32_t> note_ids_;
  Rewriter rw_;  // last: its Cast callback uses the members above
};

}  // namespace ampx::planner_detail
