// ampx._ampx.CompiledModel: CompiledModel::run on NumPy arrays (read in
// place, outputs moved into arrays), profiled runs as `ampx run --per-node`
// reports them, and `--trace`'s Chrome trace file.
#include "bindings.hpp"

#include "run_profile_output.hpp"

#include <ampx/fileio/atomic_write.hpp>
#include <ampx/tune/tuner.hpp>

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace ampx::python {
namespace {

CompiledModel& model(CompiledState& c) {
  if (!c.compiled) throw std::logic_error("the compiled model was released");
  return *c.compiled;
}

// (name, dtype, shape) of each value: the model's inputs or outputs.
nb::list describe(const std::vector<const Value*>& values) {
  nb::list out;
  for (const Value* v : values) {
    nb::list shape;
    for (int64_t d : v->type.shape) shape.append(d);
    out.append(nb::make_tuple(v->name, std::string(dtype_name(v->type.dtype)), shape));
  }
  return out;
}

std::vector<const Value*> outputs_of(const ExecutionPlan& plan) {
  const Graph& g = *plan.graph;
  std::vector<bool> is_state(g.outputs().size(), false);
  for (const StateBinding& b : plan.state) is_state[b.output] = true;
  std::vector<const Value*> values;
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (!is_state[i]) values.push_back(&g.value(g.outputs()[i]));
  return values;
}

// The model's own output names, in order: the planned graph may rename a
// value it computes in 16-bit and casts back ("y.to_f32"), the source
// graph's names are what the CLI saves and ONNX Runtime returns.
std::vector<std::string> output_names(const CompiledState& c) {
  std::vector<std::string> names;
  for (ValueId v : c.plan->graph->outputs()) names.push_back(c.plan->graph->value(v).name);
  return names;
}

nb::list to_python(const CompiledState& c, std::vector<HostTensor>&& outputs) {
  const std::vector<std::string> names = output_names(c);
  nb::list out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    HostTensor& t = outputs[i];
    const std::string dtype(dtype_name(t.type.dtype));
    out.append(nb::make_tuple(i < names.size() ? names[i] : t.name, dtype, to_numpy(std::move(t))));
  }
  return out;
}

nb::list run(CompiledState& c, const std::vector<InputArray>& arrays) {
  CompiledModel& m = model(c);
  const std::vector<HostTensorView> views = input_views(m.execution_plan(), arrays);
  std::vector<HostTensor> outputs;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(c.plan->session->mutex);
    outputs = m.run(views);
  }
  return to_python(c, std::move(outputs));
}

// `runs` profiled runs (each kernel and copy timed, docs/SESSION.md):
// the outputs of the last, and the per-node table as `ampx run --per-node
// --format json` gives it (its `per_node` member), as a JSON string.
nb::tuple run_profiled(CompiledState& c, const std::vector<InputArray>& arrays, int runs,
                       const std::string& trace) {
  if (runs < 1) throw std::invalid_argument("runs must be 1 or more");
  if (!trace.empty()) cli::check_trace_path(trace);
  CompiledModel& m = model(c);
  const std::vector<HostTensorView> views = input_views(m.execution_plan(), arrays);
  std::vector<HostTensor> outputs;
  std::string per_node;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(c.plan->session->mutex);
    std::vector<RunProfile> profiles(static_cast<size_t>(runs));
    for (RunProfile& p : profiles) outputs = m.run(views, p);
    const AmpPlan& plan = c.plan->planned->plan;
    const std::vector<double> predicted = step_predictions(plan, m.fused(), profiles.front());
    if (!trace.empty())
      fileio::write_file_atomically(trace, chrome_trace_json(profiles, plan.devices, predicted));
    per_node = cli::per_node_to_json(summarize_profiles(profiles, predicted), plan.devices).dump(2);
  }
  return nb::make_tuple(to_python(c, std::move(outputs)), per_node);
}

nb::dict stats(CompiledState& c) {
  const ExecutorStats& s = model(c).stats();
  nb::dict d;
  d["kernels"] = s.kernels;
  d["kernels_per_device"] = s.kernels_per_device;
  d["folded_at_load"] = s.folded_nodes;
  d["copies"] = s.copies;
  d["copy_bytes"] = s.copy_bytes;
  d["planned_peak_bytes"] = s.arena_bytes;
  d["no_reuse_bytes"] = s.no_reuse_bytes;
  d["constant_bytes"] = s.constant_bytes;
  return d;
}

}  // namespace

void register_compiled(nb::module_& m) {
  nb::class_<CompiledState>(m, "CompiledModel", "A compiled plan (ampx::CompiledModel).")
      .def(
          "inputs",
          [](CompiledState& c) { return describe(data_inputs(model(c).execution_plan())); },
          "(name, dtype, shape) of each input, in order.")
      .def(
          "outputs",
          [](CompiledState& c) {
            nb::list out = describe(outputs_of(model(c).execution_plan()));
            const std::vector<std::string> names = output_names(c);
            for (size_t i = 0; i < out.size() && i < names.size(); ++i) {
              nb::tuple t = nb::borrow<nb::tuple>(out[i]);
              out[i] = nb::make_tuple(names[i], t[1], t[2]);
            }
            return out;
          },
          "(name, dtype, shape) of each output, in order.")
      .def("run", &run, nb::arg("arrays"),
           "One run; the arrays in input order, each of the input's dtype and C-contiguous "
           "(read in place). Returns (name, dtype, array) per output.")
      .def("run_profiled", &run_profiled, nb::arg("arrays"), nb::arg("runs") = 1,
           nb::arg("trace") = "",
           "Profiled runs: (outputs of the last, per-node JSON); `trace`: also write the Chrome "
           "trace file there.")
      .def(
          "input_addresses",
          [](CompiledState& c, const std::vector<InputArray>& arrays) {
            std::vector<uintptr_t> at;
            for (const HostTensorView& v : input_views(model(c).execution_plan(), arrays))
              at.push_back(reinterpret_cast<uintptr_t>(v.data.data()));
            return at;
          },
          nb::arg("arrays"), "Where run() reads each input from (the tests' zero-copy check).")
      .def("stats", &stats, "Kernels, copies and memory per run (ExecutorStats).")
      .def_prop_ro("plan", [](const CompiledState& c) { return c.plan; });
}

}  // namespace ampx::python
