// ampx._ampx.Plan: a PlannedModel as the CLI shows it: `to_json()` is
// `ampx plan --format json` (schema ampx.plan/1, docs/cli-json.md), `text()`
// its table, `export(path)` what `ampx export` writes.
#include "bindings.hpp"

#include "plan_output.hpp"

#include <ampx/onnx/onnx_export.hpp>

#include <fmt/format.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <sstream>

namespace ampx::python {
namespace {

const AmpPlan& amp_plan(const PlanState& p) {
  return p.planned->plan;
}

std::string plan_json(const PlanState& p) {
  nlohmann::json j = cli::plan_to_json(amp_plan(p), p.model);
  if (p.planned->dtype_choice) j["dtype_auto"] = cli::half_choice_to_json(*p.planned->dtype_choice);
  if (!p.planned->selection.ranking.empty()) j["device_ranking"] = p.planned->selection.ranking;
  return j.dump(2);
}

std::string plan_text(const PlanState& p) {
  std::ostringstream out;
  if (const auto& c = p.planned->dtype_choice)
    out << "dtype auto: " << dtype_name(c->half) << " (" << c->f16_effective
        << " nodes native in f16, " << c->bf16_effective << " in bf16)\n";
  for (const std::string& line : p.planned->selection.ranking)
    out << "device auto: " << line << "\n";
  cli::print_plan_text(out, amp_plan(p), p.model);
  return out.str();
}

// `ampx export`: the planned graph as ONNX (opset 17), with the model's own
// output names; returns what was written, as `ampx export --format json`.
nb::dict export_plan(const PlanState& p, const std::string& path) {
  const AmpPlan& plan = amp_plan(p);
  onnx_io::ExportOptions eo;
  eo.doc = fmt::format("ampx export of {}: plan {}", p.model, cli::plan_title(plan));
  for (ValueId v : p.graph->outputs()) eo.output_names.push_back(p.graph->value(v).name);
  onnx_io::ExportStats st;
  {
    nb::gil_scoped_release release;
    onnx_io::write_onnx(plan.graph, path, eo, &st);
  }
  nb::dict d;
  d["output"] = path;
  d["nodes"] = st.nodes;
  d["nodes_16bit"] = st.nodes_16bit;
  d["casts"] = st.casts;
  d["folded_casts"] = st.folded_casts;
  d["initializers"] = st.initializers;
  d["initializers_16bit"] = st.initializers_16bit;
  d["initializer_bytes"] = st.initializer_bytes;
  d["bytes"] = st.model_bytes;
  return d;
}

}  // namespace

void register_plan(nb::module_& m) {
  nb::class_<PlanState>(m, "Plan", "A PlannedModel: precision and placement of every node.")
      .def("to_json", &plan_json, "`ampx plan --format json` of this plan (ampx.plan/1).")
      .def("text", &plan_text, "`ampx plan`'s table of this plan.")
      .def("export", &export_plan, nb::arg("path"),
           "Write the planned graph as ONNX, as `ampx export` does.")
      .def_prop_ro("model", [](const PlanState& p) { return p.model; })
      .def_prop_ro("title", [](const PlanState& p) { return cli::plan_title(amp_plan(p)); })
      .def_prop_ro("devices", [](const PlanState& p) { return amp_plan(p).devices; });
}

}  // namespace ampx::python
