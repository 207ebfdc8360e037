// A model whose input shapes come from its runs: an ONNX model with symbolic
// dimensions (a batch, a sequence length) is imported, planned and compiled
// for the shapes of the inputs it is run with, and the compiled plans are
// kept in a bounded cache keyed by those shapes, so the batch size can
// change between runs without the caller doing anything.
//
//   ampx::ShapeCachedModel model = session.load_shape_cached("det.onnx", {.policy = policy});
//   auto a = model.run(batch_of_1);   // imports, plans, compiles: a re-plan
//   auto b = model.run(batch_of_8);   // another re-plan
//   auto c = model.run(batch_of_1);   // the cached plan: no re-plan
//
// ampx's graphs have static shapes (docs/ONNX.md), so a new shape is a new
// import from the file: constant folding, planning (with the cost model)
// and compiling (fusion, kernel preparation, weight upload) again. stats()
// says how often and how long; docs/SESSION.md states the cost measured.
// A model whose shapes (a Reshape's shape, Resize's scales, Reduce axes,
// TopK's k) are computed from an input's *values* is built for the values
// it is run with (onnx_io::ImportOptions::input_values), and those values
// join the cache key: another value is another plan. A model with sequence
// or optional inputs is run with each sequence's elements as the inputs
// NAME[0], NAME[1], ... and the lengths (and the optionals given as none)
// in onnx_io::CompositeInputs, which join the key too (docs/ONNX.md,
// "Sequences and optionals").
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/session/plan_request.hpp>

#include <cstddef>
#include <list>
#include <span>
#include <string>
#include <vector>

namespace ampx {

class Session;
class CompiledModel;

struct ShapeCacheOptions {
  // Compiled plans kept; the least recently used goes first. >= 1.
  size_t capacity = 4;
  FusionOptions fusion{};
};

struct ShapeCacheStats {
  int runs = 0;
  int plans = 0;      // imports + plans + compiles (cache misses)
  int evictions = 0;  // plans dropped for the capacity
  double last_plan_ms = 0;
  double total_plan_ms = 0;
};

class ShapeCachedModel {
 public:
  ShapeCachedModel(ShapeCachedModel&&) noexcept;
  ShapeCachedModel& operator=(ShapeCachedModel&&) noexcept;
  ~ShapeCachedModel();

  // Runs the model on `inputs`, named as the model's inputs (any order;
  // every input given once). A shape (or a value of an input the graph is
  // built for) not seen among the cached plans is imported, planned and
  // compiled first. Throws std::invalid_argument
  // naming a missing or unknown input, onnx_io::OnnxError when the shapes
  // contradict the model (one line naming the input and dimension).
  // The outputs are named as the imported graph names them: the model's
  // output names, a sequence output's elements NAME[0], NAME[1], ...
  std::vector<HostTensor> run(std::span<const HostTensor> inputs,
                              const onnx_io::CompositeInputs& composites = {});
  // The same, reading the inputs in place (the Python package's NumPy
  // arrays): they are copied only where a new plan needs their values.
  std::vector<HostTensor> run(std::span<const HostTensorView> inputs,
                              const onnx_io::CompositeInputs& composites = {});

  // Imports, plans and compiles for the names and types of `inputs` (their
  // data is not read) before any run, so that a model with fixed shapes is
  // ready, or refused, at once. Returns false, caching nothing, when the
  // graph is built from an input's values (the import stops at a constant
  // computed from them, onnx_io::ValueNeededError): its first run plans it.
  // Throws what the import, planning or compiling throws otherwise.
  bool prepare(std::span<const HostTensorView> inputs,
               const onnx_io::CompositeInputs& composites = {});

  const ShapeCacheStats& stats() const { return stats_; }
  size_t cached() const { return entries_.size(); }
  // The plan of the last run (throws std::logic_error before the first).
  const AmpPlan& plan() const;

 private:
  friend class Session;
  ShapeCachedModel(Session& session, std::string model, ModelOptions base, PlanRequest request,
                   ShapeCacheOptions options);

  struct Entry;
  // kUnknown: the graph imported without the inputs' values (prepare()).
  enum class Values { kGiven, kUnknown };
  Entry& entry_for(std::span<const HostTensorView> inputs,
                   const onnx_io::CompositeInputs& composites, Values values = Values::kGiven);

  std::vector<HostTensor> run_entry(Entry& e, std::span<const HostTensorView> inputs);

  Session* session_;
  std::string model_;
  ModelOptions base_;
  // Every shape's request: PlanPurpose::kRun, quiet, and from the first
  // plan on, that plan's device selection.
  PlanRequest request_;
  ShapeCacheOptions options_;
  std::list<Entry> entries_;  // most recently used first
  ShapeCacheStats stats_;
};

}  // namespace ampx
