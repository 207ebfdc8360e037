// The fused optimizer pass (docs/TRAINING.md, "One optimizer pass"): a
// lowering of a planned training step, after the planner and before
// compilation, as fusion is. The planner plans the per-tensor nodes
// (UpdateGuard, one SgdUpdate or AdamUpdate per weight, the Casts that make
// the forward's 16-bit weights) and never sees the fused node; the device
// that runs the updates is asked for it, and a device that does not answer
// it keeps the per-tensor nodes.
#pragma once

#include <ampx/capability/capability_source.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/ir/graph.hpp>

#include <span>
#include <string>
#include <vector>

namespace ampx::train {

// A 16-bit working copy of a master weight: state the step reads (its
// forward's input) and writes (the fused node's output), derived from the
// weight and never checkpointed. `weight_input` is the weight's graph
// input; `binding` the copy's input and output in the lowered graph.
struct WeightCopy {
  size_t weight_input = 0;
  DType dtype = DType::kInvalid;
  StateBinding binding;
};

struct LoweredUpdates {
  bool fused = false;
  // When not fused: why (no updates, updates on several devices, differing
  // attributes, or the device's answer). Empty when fused.
  std::string reason;
  Graph graph;  // fused: the lowered step; else empty (use the planned graph)
  std::vector<WeightCopy> copies;
  int casts_removed = 0;  // the weights' per-step Casts now written by the update
};

// `planned` is a training step's planned graph (AmpPlan::graph);
// `devices[Node::device]` answers for its nodes. Fuses UpdateGuard and every
// update into one MultiSgdUpdate or MultiAdamUpdate (docs/OPS.md) when they
// all run on one device with one set of attributes and that device answers
// the fused node; each Cast of an updated weight to f16 or bf16 on that
// device becomes a copy the node writes. Inputs and outputs keep their
// order; the copies are added after them.
LoweredUpdates fuse_updates(const Graph& planned, std::span<CapabilitySource* const> devices);

// The bytes of `copy` for a weight's f32 bytes (rounded to nearest even, as
// Cast and the fused node round).
std::vector<std::byte> copy_bytes(DType dtype, std::span<const std::byte> weight);

}  // namespace ampx::train
