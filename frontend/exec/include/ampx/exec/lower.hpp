// Lowering: a placed (and usually fused) graph to its ExecutionPlan. Pure:
// no device is called (the memory check runs on its figures before anything
// is allocated). The rules of homes, copies and what is computed at load
// are amp/load_time.hpp's, the ones placement and the cost step use.
#pragma once

#include <ampx/exec/execution_plan.hpp>
#include <ampx/plugins/device.hpp>

#include <span>

namespace ampx {

// Where nodes run: Node::device indexing the device list (a plan's), or
// every node on the first device (Node::device ignored).
enum class NodePlacement { kFromNodes, kAllOnFirst };

struct LowerOptions {
  std::span<const StateBinding> state{};
  NodePlacement placement = NodePlacement::kFromNodes;
};

// Throws std::invalid_argument for a node placed outside `devices`, an
// invalid state binding or one whose input and output differ in type.
ExecutionPlan lower(const Graph& graph, std::span<const LoweringDevice> devices,
                    const LowerOptions& options = {});

// The names of live devices (id and plugin, no device call).
std::vector<LoweringDevice> lowering_devices(std::span<const plugins::Device* const> devices);

}  // namespace ampx
