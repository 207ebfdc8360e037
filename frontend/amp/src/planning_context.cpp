#include "planning_context.hpp"

#include <ampx/amp/load_time.hpp>
#include <ampx/amp/placement.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace ampx::planner_detail {

namespace {

// Checked before anything is built from `devices` (the graph is looked at
// only after the device list passed).
std::span<const PlanDevice> checked(std::span<const PlanDevice> devices) {
  if (devices.empty()) throw std::invalid_argument("no device to plan for");
  int listed = 0;
  for (size_t k = 0; k < devices.size(); ++k) {
    if (!devices[k].fallback_only)
      ++listed;
    else if (k + 1 != devices.size())
      throw std::invalid_argument("the fallback-only device must come last");
  }
  if (listed == 0) throw std::invalid_argument("no device listed besides the fallback");
  return devices;
}

}  // namespace

PlanQueries::PlanQueries(const Graph& g, std::span<const PlanDevice> devices)
    : g_(g), devices_(checked(devices).begin(), devices.end()), classes_(g) {
  for (PlanDevice& d : devices_) {
    answers_.emplace_back(*d.caps, classes_);
    if (d.cost) d.cost = &memo_.emplace_back(*d.cost);
    class_costs_.push_back(d.cost ? std::make_unique<ClassCosts>(*d.cost, classes_) : nullptr);
    any_cost_ = any_cost_ || d.cost;
  }
}

const std::vector<NodeId>& PlanQueries::order() {
  if (!order_made_) order_ = g_.topological_order();
  order_made_ = true;
  return order_;
}

const std::vector<bool>& PlanQueries::at_load() {
  if (!at_load_made_) at_load_ = load_time_nodes(g_);
  at_load_made_ = true;
  return at_load_;
}

PlanningContext::PlanningContext(const Graph& g, PlanQueries& queries, AmpPlan& plan,
                                 bool build_graph, PassDetail detail)
    : g_(g),
      queries_(queries),
      devices_(queries.devices()),
      plan_(plan),
      value_device_(g.num_values(), -1),
      rw_(
          g, plan, build_graph,
          [this](ValueId v, DType from, DType to, int consumer) {
            return cast_device(v, from, to, consumer);
          },
          detail) {
  const std::span<const PlanDevice> devices = devices_;
  for (size_t k = 0; k < devices.size(); ++k) {
    plan.devices.push_back(devices[k].caps->device_id());
    plan.fallback_only.push_back(devices[k].fallback_only);
    if (devices[k].fallback_only)
      fallback_ = static_cast<int>(k);  // last: PlanQueries checked the list
    else
      ++listed_;
  }
  for (size_t k = 0; k < plan.devices.size(); ++k)
    plan.device_id += (k ? "," : "") + plan.devices[k];
  if (devices.size() == 1) plan.device_id = plan.devices[0];
  plan.summary.nodes_per_device.assign(devices.size(), 0);
}

NodeId PlanningContext::id_of(const Node& n) const {
  const std::span<const Node> nodes = g_.nodes();
  const std::less<const Node*> before;  // total order, also for unrelated pointers
  if (nodes.empty() || before(&n, nodes.data()) || !before(&n, nodes.data() + nodes.size()))
    throw std::logic_error("planner: node '" + n.name + "' is not of the graph being planned");
  return static_cast<NodeId>(&n - nodes.data());
}

const CapabilitySource::Answer& PlanningContext::ask(int k, const Node& n, DType d) {
  if (d != DType::kInvalid) return queries_.answers(k).node_as(g_, id_of(n), d);
  ins_.clear();
  outs_.clear();
  for (ValueId v : n.inputs) ins_.push_back(rw_.home_dtype(v));
  for (ValueId v : n.outputs) outs_.push_back(g_.value(v).type.dtype);
  lowered_.assign(g_, n, ins_, outs_, false);
  scratch_ = queries_.answers(k)(lowered_.desc());
  return scratch_;
}

double PlanningContext::cost_on(int k, const Node& n, DType d) {
  const PlanDevice& dev = devices_[static_cast<size_t>(k)];
  ClassCosts* costs = queries_.costs(k);
  double t = costs ? costs->node_us(g_, id_of(n), d) : ask(k, n, d).cost_us;
  if (t < 0) return -1.0;
  for (ValueId v : n.inputs) {
    const Value& val = g_.value(v);
    if (val.is_constant() || !is_float(val.type.dtype)) continue;
    const int home = value_device_[static_cast<size_t>(v)];
    if (home >= 0 && home != k)
      t += copy_cost_us(static_cast<uint64_t>(element_count(val.type.shape)) * dtype_size(d),
                        devices_[static_cast<size_t>(home)].cost, dev.cost);
    if (rw_.home_dtype(v) != d && costs) {
      const double c = costs->cast_us(g_, v, rw_.home_dtype(v), d);
      if (c > 0) t += c;
    }
  }
  return t;
}

Placed PlanningContext::by_order(int k) const {
  if (k == 0) return Placed{0, PlacementReason::kFirstChoice, {}};
  std::string s = "unsupported on ";
  for (int j = 0; j < std::min(k, listed_); ++j) s += (j ? ", " : "") + plan_.devices[j];
  return Placed{k, PlacementReason::kFallback, std::move(s)};
}

int32_t PlanningContext::intern_note(const std::string& note) {
  auto [it, added] = note_ids_.try_emplace(note, static_cast<int32_t>(plan_.notes.size()));
  if (added) plan_.notes.push_back(note);
  return it->second;
}

int PlanningContext::cast_device(ValueId v, DType from, DType to, int consumer) {
  const int home = value_device_[static_cast<size_t>(v)];
  const uint64_t key = (static_cast<uint64_t>(home + 1) << 40) |
                       (static_cast<uint64_t>(consumer + 1) << 24) |
                       (static_cast<uint64_t>(from) << 8) | static_cast<uint64_t>(to);
  if (auto it = cast_device_memo_.find(key); it != cast_device_memo_.end()) return it->second;
  const Node cast{"cast", OpType::kCast, {v}, {v}, {{"to", static_cast<int64_t>(to)}}, {}, {}};
  const DType in[] = {from}, out[] = {to};
  LoweredNode l;
  l.assign(g_, cast, in, out, false);
  // The host never assumes support, for a Cast it inserts either: where the
  // source is computed, else where it is read, else the first device of the
  // plan (listed ones, then the fallback) that runs it.
  std::vector<int> order;
  for (int k : {home, consumer})
    if (k >= 0) order.push_back(k);
  for (int k = 0; k < static_cast<int>(devices_.size()); ++k) order.push_back(k);
  int chosen = -1;
  std::string refusals;
  for (int k : order) {
    const auto answer = queries_.answers(k)(l.desc());
    if (runs(answer.support)) {
      chosen = k;
      break;
    }
    const std::string& id = plan_.devices[static_cast<size_t>(k)];
    if (refusals.find(id) == std::string::npos)
      refusals +=
          (refusals.empty() ? "" : "; ") + id + (answer.note.empty() ? "" : ": " + answer.note);
  }
  if (chosen < 0) {
    // The devices' coverage, as a node no device runs (ampx.DeviceError).
    throw PlacementError("Cast " + std::string(dtype_name(from)) + " -> " +
                         std::string(dtype_name(to)) + " of value '" + g_.value(v).name +
                         "': no device of " + plan_.device_id + " runs it (" + refusals + ")");
  }
  cast_device_memo_.emplace(key, chosen);
  return chosen;
}

}  // namespace ampx::planner_detail
