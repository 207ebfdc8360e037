#include "planning_context.hpp"

#include <algorithm>
#include <stdexcept>

namespace ampx::planner_detail {

namespace {

// Checked before any member is built from `devices`.
std::span<const PlanDevice> checked(std::span<const PlanDevice> devices) {
  if (devices.empty()) throw std::invalid_argument("no device to plan for");
  return devices;
}

}  // namespace

PlanningContext::PlanningContext(const Graph& g, std::span<const PlanDevice> devices, AmpPlan& plan,
                                 bool build_graph)
    : g_(g),
      devices_(checked(devices)),
      plan_(plan),
      value_device_(g.num_values(), -1),
      rw_(g, plan, build_graph, [this](ValueId v, DType from, DType to, int consumer) {
        return cast_device(v, from, to, consumer);
      }) {
  for (size_t k = 0; k < devices.size(); ++k) {
    plan.devices.push_back(devices[k].caps->device_id());
    plan.fallback_only.push_back(devices[k].fallback_only);
    if (devices[k].fallback_only) {
      if (k + 1 != devices.size())
        throw std::invalid_argument("the fallback-only device must come last");
      fallback_ = static_cast<int>(k);
    } else {
      ++listed_;
    }
  }
  if (listed_ == 0) throw std::invalid_argument("no device listed besides the fallback");
  for (size_t k = 0; k < plan.devices.size(); ++k)
    plan.device_id += (k ? "," : "") + plan.devices[k];
  if (devices.size() == 1) plan.device_id = plan.devices[0];
  plan.summary.nodes_per_device.assign(devices.size(), 0);
  queries_.reserve(devices.size());
  for (const PlanDevice& d : devices) queries_.emplace_back(*d.caps);
}

CapabilitySource::Answer PlanningContext::ask(int k, const Node& n, DType d) {
  if (d == DType::kInvalid) {
    ins_.clear();
    outs_.clear();
    for (ValueId v : n.inputs) ins_.push_back(rw_.home_dtype(v));
    for (ValueId v : n.outputs) outs_.push_back(g_.value(v).type.dtype);
  } else {
    dtypes_as(g_, n, d, ins_, outs_);
  }
  lowered_.assign(g_, n, ins_, outs_, false);
  return queries_[static_cast<size_t>(k)](lowered_.desc());
}

double PlanningContext::cost_on(int k, const Node& n, DType d) {
  const PlanDevice& dev = devices_[static_cast<size_t>(k)];
  double t = dev.cost ? node_time(*dev.cost, cost_lowering_, g_, n, d) : ask(k, n, d).cost_us;
  if (t < 0) return -1.0;
  for (ValueId v : n.inputs) {
    const Value& val = g_.value(v);
    if (val.is_constant() || !is_float(val.type.dtype)) continue;
    const int home = value_device_[static_cast<size_t>(v)];
    if (home >= 0 && home != k)
      t += copy_cost_us(static_cast<uint64_t>(element_count(val.type.shape)) * dtype_size(d),
                        devices_[static_cast<size_t>(home)].cost, dev.cost);
    if (rw_.home_dtype(v) != d && dev.cost) {
      const double c = cast_time(*dev.cost, cost_lowering_, g_, v, rw_.home_dtype(v), d);
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
    const auto answer = queries_[static_cast<size_t>(k)](l.desc());
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
    throw std::runtime_error("Cast " + std::string(dtype_name(from)) + " -> " +
                             std::string(dtype_name(to)) + " of value '" + g_.value(v).name +
                             "': no device of " + plan_.device_id + " runs it (" + refusals + ")");
  }
  cast_device_memo_.emplace(key, chosen);
  return chosen;
}

}  // namespace ampx::planner_detail
