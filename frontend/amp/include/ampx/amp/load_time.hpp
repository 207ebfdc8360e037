// The two rules every step that reasons about a run shares (placement's
// copies, the cost step's predictions, lowering), written once here:
//
// - computed at load: a node whose inputs are all weights or computed from
//   weights only (the weight Casts of a 16-bit plan) is evaluated once at
//   load instead of every run. Plans price it at 0, the run description
//   counts the rest.
// - homes and copies: a value lives on its producer's device; a graph input
//   on the device of its first run-time reader. A run-time reader on another
//   device gets one copy, put before the first such reader and shared by
//   every later reader there. Values known at load are never copied per run:
//   they are put on every device that reads them, once.
#pragma once

#include <ampx/ir/graph.hpp>

#include <span>
#include <vector>

namespace ampx {

// By NodeId: true for a node evaluated at load.
std::vector<bool> load_time_nodes(const Graph& g);

// The homes and copies of a graph whose node i runs on node_device[i].
struct Residency {
  struct Copy {
    ValueId value = kNone;
    int from = 0;
    int to = 0;
    size_t before = 0;  // index into run_nodes: the first reader on `to`
  };
  std::vector<bool> at_load;        // by NodeId (load_time_nodes)
  std::vector<bool> known_at_load;  // by ValueId: constants and what load-time nodes compute
  // By ValueId: the producer's device; a graph input's first run-time
  // reader's (0 when none reads it); -1 for a constant.
  std::vector<int> home;
  std::vector<NodeId> load_nodes;  // topological order
  std::vector<NodeId> run_nodes;   // topological order
  std::vector<Copy> copies;        // in run order
};
Residency residency(const Graph& g, std::span<const int> node_device);

}  // namespace ampx
