#include <ampx/amp/planner.hpp>

#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/precision_cut.hpp>
#include "cost_step.hpp"
#include "effective_step.hpp"
#include "placement_step.hpp"
#include "plan_queries.hpp"
#include "rewriter.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace ampx {

std::string_view intent_reason_name(IntentReason r) {
  switch (r) {
    case IntentReason::kLevelO0:
      return "level-O0";
    case IntentReason::kWhiteList:
      return "white-list";
    case IntentReason::kNotWhiteListed:
      return "not-white-listed";
    case IntentReason::kBlackList:
      return "black-list";
    case IntentReason::kLevelDefault:
      return "policy";
    case IntentReason::kOverride:
      return "override";
    case IntentReason::kFollowsInput:
      return "follows-input";
    case IntentReason::kPromote:
      return "promote";
    case IntentReason::kNotFloat:
      return "not-float";
    case IntentReason::kExplicitCast:
      return "explicit-cast";
    case IntentReason::kFollowsForward:
      return "follows-forward";
    case IntentReason::kMasterWeights:
      return "master-weights";
    case IntentReason::kOverflowFallback:
      return "overflow-fallback";
    case IntentReason::kProbe:
      return "probe";
    case IntentReason::kIntegerExact:
      return "integer-exact";
    case IntentReason::kBatchStatistics:
      return "batch-statistics";
  }
  return "?";
}

std::string_view effective_reason_name(EffectiveReason r) {
  switch (r) {
    case EffectiveReason::kAsIntended:
      return "as-intended";
    case EffectiveReason::kNoNativeKernel:
      return "no-native-kernel";
    case EffectiveReason::kUnsupported16:
      return "unsupported-16bit";
    case EffectiveReason::kForcedEmulated:
      return "forced-emulated";
    case EffectiveReason::kCost:
      return "cost";
    case EffectiveReason::kDataMovement:
      return "data-movement";
    case EffectiveReason::kTuned:
      return "tuned";
  }
  return "?";
}

std::string NodePlan::reason() const {
  if (effective_reason != EffectiveReason::kAsIntended)
    return std::string(effective_reason_name(effective_reason));
  return std::string(intent_reason_name(intent_reason));
}

std::string_view placement_reason_name(PlacementReason r) {
  switch (r) {
    case PlacementReason::kFirstChoice:
      return "first-choice";
    case PlacementReason::kFallback:
      return "fallback";
    case PlacementReason::kCost:
      return "cost";
    case PlacementReason::kOverride:
      return "override";
  }
  return "?";
}

std::string NodePlan::placement_text() const {
  std::string s(placement_reason_name(placement));
  if (placement == PlacementReason::kFallback && !placement_note.empty())
    s += ": " + placement_note;
  return s;
}

namespace {

using namespace planner_detail;

// The summary counts, the unused fallback dropped from the device list,
// and the copies of a built multi-device plan.
void finish_plan(AmpPlan& plan, int fallback, bool build_graph) {
  PlanSummary& s = plan.summary;
  s.nodes = static_cast<int>(plan.nodes.size());
  for (const auto& np : plan.nodes) {
    s.float_nodes += np.is_float_node ? 1 : 0;
    const bool i16 = np.is_float_node && is_16bit_float(np.intended);
    const bool e16 = np.is_float_node && is_16bit_float(np.effective);
    s.intended_16bit += i16 ? 1 : 0;
    s.effective_16bit += e16 ? 1 : 0;
    const bool by_cost = np.effective_reason == EffectiveReason::kCost;
    const bool by_tuning = np.effective_reason == EffectiveReason::kTuned;
    s.kept_fp32_no_native += (i16 && !e16 && !by_cost && !by_tuning) ? 1 : 0;
    s.kept_fp32_cost += by_cost ? 1 : 0;
    s.kept_fp32_tuned += by_tuning ? 1 : 0;
    s.fallbacks += np.placement == PlacementReason::kFallback ? 1 : 0;
    s.placed_by_cost += np.placement == PlacementReason::kCost ? 1 : 0;
    s.pinned += np.placement == PlacementReason::kOverride ? 1 : 0;
    ++s.nodes_per_device[static_cast<size_t>(np.device)];
  }
  s.casts = static_cast<int>(plan.casts.size());
  for (const auto& c : plan.casts) s.casts_on_constants += c.on_constant ? 1 : 0;
  // An unused last resort is not part of the plan: a plan for one listed
  // device that needed no fallback is a single-device plan.
  if (fallback >= 0 && s.nodes_per_device[static_cast<size_t>(fallback)] == 0 &&
      std::none_of(plan.casts.begin(), plan.casts.end(),
                   [&](const CastRecord& c) { return c.device == fallback; })) {
    plan.devices.pop_back();
    plan.fallback_only.pop_back();
    s.nodes_per_device.pop_back();
    plan.device_id.clear();
    for (size_t k = 0; k < plan.devices.size(); ++k)
      plan.device_id += (k ? "," : "") + plan.devices[k];
  }
  if (build_graph) {
    // One device: nothing to copy (every node runs where its inputs are).
    if (plan.devices.size() > 1) plan.copies = plan_copies(plan.graph);
    s.copies = static_cast<int>(plan.copies.size());
    for (const auto& c : plan.copies) s.copy_bytes += c.bytes;
  }
}

// The policy, placement and capability pass. `demoted` (by source NodeId,
// may be null): nodes the cost step keeps in f32 although they are native.
// `fixed` (by source NodeId, may be null): placements decided by an earlier
// pass, kept so that the cost step cannot move nodes. `cast_sources` (may
// be null): receives the source value of each Cast. PassDetail::
// kForCostStep: the nodes' names and the Cast records are left out.
AmpPlan plan_decisions(const Graph& g, const AmpPolicy& policy, PlanQueries& queries,
                       const PlanOptions& options, std::span<const DevicePin> pins,
                       const std::vector<bool>* demoted, const std::vector<Placed>* fixed,
                       std::vector<ValueId>* cast_sources = nullptr,
                       PassDetail detail = PassDetail::kFull) {
  AmpPlan plan;
  plan.policy = policy;
  PlanningContext ctx(g, queries, plan, options.build_graph, detail);
  const bool full = detail == PassDetail::kFull;
  const std::span<const PlanDevice> devices = ctx.devices();
  const int fallback = ctx.fallback(), listed = ctx.listed();
  PolicyStep policy_step(policy);
  std::vector<bool> pin_used(pins.size(), false);
  for (const DevicePin& pin : pins)
    if (pin.device < 0 || pin.device >= static_cast<int>(devices.size()))
      throw std::invalid_argument("pin '" + pin.pattern + "': no device " +
                                  std::to_string(pin.device));

  Rewriter& rw = ctx.rewriter();
  std::vector<int>& value_device = ctx.value_device();
  const std::vector<NodeId>& order = queries.order();
  plan.nodes.reserve(order.size());
  std::vector<std::string> unplaceable;  // "'name' (Op f32)"
  std::string first_unplaceable;         // its full message

  for (NodeId id : order) {
    const Node& n = g.node(id);
    NodePlan np;
    np.node = id;
    if (full) np.name = n.name;
    np.op = n.op;
    if (full) np.origin = n.origin;
    // A Cast's dtypes are its own (a BitCast's too: its bits are the
    // value), and the overflow probe reads every tensor in the dtype it has
    // (a Cast in front would hide nothing and cost a copy): none is planned
    // to a precision.
    const bool cast = n.op == OpType::kCast || n.op == OpType::kBitCast;
    np.is_float_node = !cast && n.op != OpType::kTensorStats && touches_float(g, n);
    bool want16 = false;

    if (!np.is_float_node) {
      np.intent_reason = cast                           ? IntentReason::kExplicitCast
                         : n.op == OpType::kTensorStats ? IntentReason::kProbe
                                                        : IntentReason::kNotFloat;
      np.intended = np.effective = g.value(n.outputs.at(0)).type.dtype;
    } else {
      // 1. Policy.
      const PolicyStep::Intent intent =
          policy_step.intend(g, n, [&](ValueId v) { return rw.home_dtype(v); });
      want16 = intent.want16;
      np.intent_reason = intent.reason;
      np.intended = want16 ? policy.half : DType::kF32;
      np.effective = DType::kF32;
    }

    // 2. Placement (docs/PLACEMENT.md): pinned; else the first listed
    // device that runs the node in the wanted precision, 16-bit only where
    // that is real; where no listed device has a real 16-bit kernel first,
    // f32 on the first device that runs it against 16-bit on the first that
    // has one, by predicted time; else the fallback device.
    const DType want = !np.is_float_node ? DType::kInvalid : want16 ? policy.half : DType::kF32;
    Placed placed;
    bool placeable = true;
    int pin = -1;
    for (size_t i = pins.size(); i-- > 0;)
      if (pins[i].matches(n.name)) {
        if (pin < 0) pin = pins[i].device;
        pin_used[i] = true;
      }
    if (fixed) {
      placed = (*fixed)[static_cast<size_t>(id)];
    } else if (pin >= 0) {
      placed = {pin, PlacementReason::kOverride, {}};
    } else if (devices.size() > 1) {
      if (auto p = place_node(ctx, n, want, want16, options.capability_blind))
        placed = std::move(*p);
      else
        placeable = false;
    }
    np.device = placed.device;
    np.placement = placed.reason;
    np.placement_note = placed.note;
    const int dev = placed.device;

    if (!placeable) {
      // Every listed device refuses it in every precision: collect it (the
      // error lists them all) and go on as if the first device ran it f32.
      if (unplaceable.empty())
        first_unplaceable = "node '" + n.name + "' (" + std::string(op_name(n.op)) +
                            "): no device of " + plan.device_id + " can run it";
      unplaceable.push_back("'" + n.name + "' (" + std::string(op_name(n.op)) + " " +
                            std::string(dtype_name(np.is_float_node ? DType::kF32 : np.effective)) +
                            ")");
    } else if (np.is_float_node && want16) {
      // 3. Effective: what the chosen device really has for exactly this
      // node in 16-bit.
      decide_effective(ctx, n, dev, policy.half, demoted && (*demoted)[static_cast<size_t>(id)],
                       options.tuned_f32 != nullptr, options.capability_blind, np);
    }

    // 4. The host never assumes support: the variant that will run must be
    // answered too (16-bit native was just answered).
    if (placeable && !(np.is_float_node && is_16bit_float(np.effective))) {
      const auto& answer = ctx.ask(dev, n, np.is_float_node ? np.effective : DType::kInvalid);
      if (answer.support == AMPX_SUPPORT_UNSUPPORTED) {
        const std::string why = "node '" + n.name + "' (" + std::string(op_name(n.op)) +
                                "): device " + plan.devices[static_cast<size_t>(dev)] +
                                " cannot run it in " + std::string(dtype_name(np.effective)) +
                                (answer.note.empty() ? "" : ": " + answer.note);
        if (pin >= 0) throw PlacementError(why + " (it is pinned there by --place)");
        if (unplaceable.empty()) first_unplaceable = why;
        unplaceable.push_back("'" + n.name + "' (" + std::string(op_name(n.op)) + " " +
                              std::string(dtype_name(np.effective)) + ")");
      }
    }

    // 5. Rewrite with Casts where an input's home dtype differs (decided
    // also when no graph is built: the Casts are part of the decisions).
    std::vector<ValueId> new_inputs;
    if (options.build_graph) new_inputs.reserve(n.inputs.size());
    for (ValueId v : n.inputs) {
      const ValueId input = np.is_float_node && is_float(g.value(v).type.dtype)
                                ? rw.as(v, np.effective, dev)
                                : rw.home(v);
      if (options.build_graph) new_inputs.push_back(input);
    }
    rw.add(n, std::move(new_inputs), np.effective, np.is_float_node, dev);
    for (ValueId v : n.outputs) value_device[static_cast<size_t>(v)] = dev;
    plan.nodes.push_back(std::move(np));
  }

  // One node: its own message (with the device's note); more: all of them.
  if (unplaceable.size() == 1) throw PlacementError(first_unplaceable);
  if (!unplaceable.empty()) {
    std::string listed_ids;
    for (int k = 0; k < listed; ++k) listed_ids += (k ? ", " : "") + plan.devices[k];
    std::string list;
    for (const auto& u : unplaceable) list += (list.empty() ? "" : ", ") + u;
    throw PlacementError(
        std::to_string(unplaceable.size()) + " node" + (unplaceable.size() == 1 ? "" : "s") +
        " cannot run on " + listed_ids +
        (fallback >= 0 ? " nor on the fallback " + plan.devices[fallback] : " (no fallback)") +
        ": " + list);
  }
  policy_step.check_every_override_used(g.name);
  for (size_t i = 0; i < pins.size(); ++i)
    if (!pin_used[i])
      throw std::invalid_argument("--place '" + pins[i].pattern + "' matches no node in graph '" +
                                  g.name + "'");

  // Graph outputs keep their dtypes.
  for (ValueId v : g.outputs()) {
    const int home = value_device[static_cast<size_t>(v)];
    const ValueId out = rw.as(v, g.value(v).type.dtype, home >= 0 ? home : 0);
    if (options.build_graph) plan.graph.add_output(out);
  }

  finish_plan(plan, fallback, options.build_graph);
  if (cast_sources) *cast_sources = ctx.cast_sources();
  return plan;
}

}  // namespace

namespace {

using namespace planner_detail;

AmpPlan plan_with_costs(const Graph& g, const AmpPolicy& policy, std::span<const PlanDevice> given,
                        const PlanOptions& options, std::span<const DevicePin> pins) {
  if (!is_16bit_float(policy.half))
    throw std::invalid_argument("16-bit dtype must be f16 or bf16, got " +
                                std::string(dtype_name(policy.half)));
  // Every pass below asks through these: each device's answers and cost
  // model memoised for this call, by node class (planning_context.hpp).
  PlanQueries queries(g, given);
  const bool multi = given.size() > 1;
  if (!queries.any_cost() && options.tuned_f32) {
    PlanOptions inner = options;
    inner.build_graph = options.build_graph || multi;
    const std::vector<bool> demoted = tuned_demotions(g, *options.tuned_f32);
    return plan_decisions(g, policy, queries, inner, pins, &demoted, nullptr);
  }
  if (!queries.any_cost()) {
    PlanOptions inner = options;
    // Copies are found on the planned graph: a multi-device plan keeps it
    // (freeing it again would cost as much as building it).
    inner.build_graph = options.build_graph || multi;
    return plan_decisions(g, policy, queries, inner, pins, nullptr, nullptr);
  }
  PlanOptions inner = options;
  inner.build_graph = true;  // predictions are made on the planned graph
  std::vector<bool> demoted;
  std::vector<Placed> placed;
  if (options.tuned_f32) {
    demoted = tuned_demotions(g, *options.tuned_f32);
  } else if (!options.capability_blind) {
    PlanOptions first_options = options;
    first_options.build_graph = false;
    const AmpPlan first = plan_decisions(g, policy, queries, first_options, pins, nullptr, nullptr);
    demoted = choose_by_cost(g, first, policy.half, queries);
    placed.resize(g.num_nodes());
    for (const NodePlan& np : first.nodes)
      placed[static_cast<size_t>(np.node)] = {np.device, np.placement, np.placement_note};
  }
  std::vector<ValueId> cast_sources;
  AmpPlan plan =
      plan_decisions(g, policy, queries, inner, pins, demoted.empty() ? nullptr : &demoted,
                     placed.empty() ? nullptr : &placed, &cast_sources);
  std::vector<capability::CostModel*> costs;
  for (const PlanDevice& d : queries.devices()) costs.push_back(d.cost);
  PlannedFrom from{g, queries, cast_sources};
  predict_placed(plan, costs, &from);
  // The times the cost step compared, for explanations.
  if (!demoted.empty()) {
    for (NodePlan& np : plan.nodes) {
      if (!np.is_float_node || np.support_16bit != AMPX_SUPPORT_NATIVE) continue;
      if (!is_16bit_float(np.intended)) continue;
      ClassCosts* cost = queries.costs(np.device);
      if (!cost) continue;
      np.time_f32_us = cost->node_us(g, np.node, DType::kF32);
      np.time_16_us = cost->node_us(g, np.node, policy.half);
    }
  }
  if (!options.build_graph && !multi) plan.graph = Graph{};
  return plan;
}

}  // namespace

void predict_plan(AmpPlan& plan, capability::CostModel& cost) {
  MemoizedCost memo(cost);
  std::vector<capability::CostModel*> costs(std::max<size_t>(plan.devices.size(), 1), &memo);
  predict_placed(plan, costs);
}

void predict_plan(AmpPlan& plan, std::span<capability::CostModel* const> costs) {
  if (costs.size() != plan.devices.size())
    throw std::invalid_argument("predict_plan: one cost model per plan device");
  std::deque<MemoizedCost> memo;
  std::vector<capability::CostModel*> memoised;
  for (capability::CostModel* c : costs) memoised.push_back(c ? &memo.emplace_back(*c) : nullptr);
  predict_placed(plan, memoised);
}

AmpPlan plan_amp(const Graph& g, const AmpPolicy& policy, CapabilitySource& device,
                 const PlanOptions& options) {
  const PlanDevice one[] = {{&device, options.cost, false}};
  return plan_with_costs(g, policy, one, options, {});
}

AmpPlan plan_amp(const Graph& g, const AmpPolicy& policy, std::span<const PlanDevice> devices,
                 const PlanOptions& options, std::span<const DevicePin> pins) {
  return plan_with_costs(g, policy, devices, options, pins);
}

HalfChoice choose_half_dtype(const Graph& graph, const AmpPolicy& policy,
                             CapabilitySource& device) {
  const PlanDevice one[] = {{&device, nullptr, false}};
  return choose_half_dtype(graph, policy, one);
}

HalfChoice choose_half_dtype(const Graph& graph, const AmpPolicy& policy,
                             std::span<const PlanDevice> devices) {
  HalfChoice c;
  AmpPolicy p = policy;
  // Placement without costs: which dtype is native where the nodes land.
  std::vector<PlanDevice> plain(devices.begin(), devices.end());
  for (PlanDevice& d : plain) d.cost = nullptr;
  p.half = DType::kF16;
  c.f16_effective =
      plan_amp(graph, p, plain, PlanOptions{.build_graph = false}).summary.effective_16bit;
  p.half = DType::kBF16;
  c.bf16_effective =
      plan_amp(graph, p, plain, PlanOptions{.build_graph = false}).summary.effective_16bit;
  c.any_native = c.f16_effective > 0 || c.bf16_effective > 0;
  c.half = c.bf16_effective > c.f16_effective ? DType::kBF16 : DType::kF16;
  return c;
}

}  // namespace ampx
