// Placement: which of the selected devices runs each node, why, and which
// values cross a device boundary. The planner decides placement and
// precision together (docs/PLACEMENT.md); this header holds the vocabulary
// and the copy analysis of a placed graph, which the planner and the
// executor share so that what a plan reports is what a run does.
#pragma once

#include <ampx/capability/capability_source.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ampx {

// A node that no listed device (nor the fallback) runs in the precision the
// plan needs: the devices' coverage, not a fault of the model. Python's
// ampx.DeviceError; the message names the nodes and the devices.
class PlacementError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One device the planner may place nodes on, in the user's order.
struct PlanDevice {
  CapabilitySource* caps = nullptr;
  capability::CostModel* cost = nullptr;  // may be null: the answers' cost hints, if any
  // The last resort (cpu_ref when the user did not list it): never chosen
  // by order, only for nodes no listed device can run. At most one, last.
  bool fallback_only = false;
};

// `--place PATTERN=DEVICE`: pin the nodes a name (or prefix ending in '*')
// matches to one device of the list, like ncnn's per-layer masks.
struct DevicePin {
  std::string pattern;
  int device = 0;  // index into the plan's devices
  bool matches(std::string_view node_name) const;
};

enum class PlacementReason {
  kFirstChoice,  // the first listed device runs it in the planned precision
  kFallback,     // earlier devices cannot run it (PlacementNote names them)
  kCost,         // precision and device chosen together by predicted time
  kOverride,     // pinned by a DevicePin
};
std::string_view placement_reason_name(PlacementReason r);  // "first-choice", ...

// A value read on a device other than its home (the device of its
// producer; a graph input's home is the device of its first consumer).
// One record per value and destination device, whatever the number of
// consumers there. Constants are uploaded to every device that reads them
// at load, never copied per run, and are not recorded.
struct CopyRecord {
  std::string value;
  int from = 0, to = 0;  // device indices
  uint64_t bytes = 0;
};

// The copies a run of `placed` (nodes carrying Node::device) makes per run,
// in the order of the first consumer on each destination device. Nodes
// that are evaluated at load (fed by constants only) copy at load, and are
// not counted.
std::vector<CopyRecord> plan_copies(const Graph& placed);

// The planner's estimate of one copy between devices when no probe data
// prices it: fixed latency plus bytes at host memory bandwidth (documented in
// docs/PLACEMENT.md).
double copy_cost_us(uint64_t bytes);

// A copy from device `from` to device `to` through host memory: `from`'s
// measured device-to-host fit plus `to`'s host-to-device fit (the probe's
// copy fits, CostModel::copy_us), each leg that is not measured priced at
// half of copy_cost_us(). Either model may be null.
double copy_cost_us(uint64_t bytes, capability::CostModel* from, capability::CostModel* to);

}  // namespace ampx
