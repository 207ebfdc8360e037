// ampx._ampx.Session.report: Session::report (`ampx report`): every model on
// every requested device at O0-O3, rendered as text, Markdown, JSON
// (ampx.report/1) or one HTML file (capability/report.hpp).
#include "bindings.hpp"
#include "progress.hpp"

#include <ampx/capability/report.hpp>

#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace ampx::python {
namespace {

std::string report(const std::shared_ptr<SessionState>& self,
                   const std::vector<std::string>& models, const std::string& format,
                   const std::vector<std::string>& devices, const std::string& dtype, bool run,
                   int iters, int warmup,
                   const std::map<std::string, std::vector<int64_t>>& input_shapes,
                   const std::vector<std::string>& placements, bool cost, bool tuned,
                   nb::object progress) {
  if (models.empty()) throw std::invalid_argument("report: no models given");
  if (format != "text" && format != "md" && format != "json" && format != "html")
    throw std::invalid_argument("format '" + format + "': expected text, md, json or html");
  if (dtype != "auto" && dtype != "f16" && dtype != "bf16")
    throw std::invalid_argument("dtype '" + dtype + "': expected f16, bf16 or auto");
  if (iters < 1 || warmup < 0)
    throw std::invalid_argument("iters must be 1 or more, warmup 0 or more");
  ReportRequest request;
  request.devices = devices;
  request.half = dtype == "auto" ? HalfDType::kAuto : HalfDType::kPolicy;
  request.half_type = dtype == "bf16" ? DType::kBF16 : DType::kF16;
  request.runs = run ? ReportRuns::kMeasure : ReportRuns::kPredictOnly;
  request.iters = iters;
  request.warmup = warmup;
  for (const auto& [name, dims] : input_shapes)
    request.model_options.input_shapes[name] = Shape(dims.begin(), dims.end());
  request.placements = placements;
  request.costs = cost ? CostUse::kModel : CostUse::kNone;
  request.tuning = tuned ? ReportTuning::kUse : ReportTuning::kIgnore;
  Progress bar(std::move(progress), "report");
  if (bar.active())
    request.progress = [&bar](int done, int total, const std::string& what) {
      bar.update(done, total, what);
    };
  std::string text;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(self->mutex);
    const capability::Report r = self->session.report(models, request);
    bar.finish("done");
    if (format == "json")
      text = capability::report_to_json(r).dump(2) + "\n";
    else if (format == "md")
      text = capability::render_markdown(r);
    else if (format == "html")
      text = capability::render_html(r);
    else
      text = capability::render_text(r);
  }
  return text;
}

}  // namespace

void add_report_method(nb::class_<SessionState>& session) {
  session.def("report", &report, nb::arg("models"), nb::arg("format") = "text",
              nb::arg("devices") = std::vector<std::string>{}, nb::arg("dtype") = "auto",
              nb::arg("run") = true, nb::arg("iters") = 3, nb::arg("warmup") = 1,
              nb::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
              nb::arg("placements") = std::vector<std::string>{}, nb::arg("cost") = true,
              nb::arg("tuned") = true, nb::arg("progress") = nb::none(),
              "Session::report, rendered as `ampx report --format FORMAT` renders it.");
}

}  // namespace ampx::python
