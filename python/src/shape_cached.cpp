// ampx._ampx.ShapeCachedModel: Session::load_shape_cached, a model planned
// and compiled per set of input shapes and per value of the inputs its graph
// needs as constants (a Reshape's shape, Resize's scales, TopK's k fed as
// graph inputs), its compiled plans in the Session's bounded LRU cache
// (docs/SESSION.md). ampx.InferenceSession runs on it: one pipeline and one
// cache, the same as `ampx run --input`.
#include "bindings.hpp"

#include <ampx/session/shape_cached_model.hpp>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

namespace ampx::python {
namespace {

// The model and the session it plans on (which must outlive it).
struct ShapeCachedState {
  std::shared_ptr<SessionState> session;
  std::optional<ShapeCachedModel> model;
  std::string path;  // the MODEL spec, as the plans name it
  ~ShapeCachedState() {
    if (!session || !model) return;
    const auto lock = lock_for_destruction(*session);
    model.reset();  // the compiled plans' device memory back under the lock
  }
};

// (name, ampx dtype, array) per input, any order.
using NamedInput = std::tuple<std::string, std::string, InputArray>;

// A run's sequence lengths and optional inputs given as none.
onnx_io::CompositeInputs composites_of(const std::map<std::string, int64_t>& sequence_lengths,
                                       const std::vector<std::string>& absent) {
  onnx_io::CompositeInputs c;
  c.sequence_lengths.insert(sequence_lengths.begin(), sequence_lengths.end());
  c.absent.insert(absent.begin(), absent.end());
  return c;
}

std::shared_ptr<ShapeCachedState> load(
    std::shared_ptr<SessionState> self, const std::string& model, const std::string& amp,
    const std::string& dtype, const std::vector<std::string>& keep_fp32,
    const std::vector<std::string>& force_16bit,
    const std::vector<std::pair<std::string, std::string>>& place,
    const std::optional<std::string>& white_list, const std::optional<std::string>& black_list,
    bool cost, bool tuned, bool capability_blind, int capacity) {
  if (capacity < 1) throw std::invalid_argument("capacity must be 1 or more");
  PlanRequest request =
      make_plan_request(plan_args(amp, dtype, keep_fp32, force_16bit, place, white_list, black_list,
                                  cost, tuned, capability_blind),
                        model, self->fallback);
  auto state = std::make_shared<ShapeCachedState>();
  state->path = model;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(self->mutex);
    state->model.emplace(self->session.load_shape_cached(
        model, std::move(request), {}, {.capacity = static_cast<size_t>(capacity)}));
  }
  state->session = std::move(self);
  return state;
}

// One run: imported, planned and compiled first where the shapes (or the
// values the graph is built for) are new. Returns (name, dtype, array) per
// output, in the model's order.
nb::list run(ShapeCachedState& s, const std::vector<NamedInput>& inputs,
             const std::map<std::string, int64_t>& sequence_lengths,
             const std::vector<std::string>& absent) {
  const onnx_io::CompositeInputs composites = composites_of(sequence_lengths, absent);
  std::vector<HostTensorView> views;
  views.reserve(inputs.size());
  for (const auto& [name, dtype, array] : inputs) {
    const std::optional<DType> t = parse_dtype(dtype);
    if (!t) throw std::invalid_argument("input '" + name + "': unknown dtype '" + dtype + "'");
    views.push_back(input_view(name, *t, array));
  }
  std::vector<HostTensor> outputs;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(s.session->mutex);
    outputs = s.model->run(views, composites);
  }
  nb::list out;
  for (HostTensor& t : outputs) {
    const std::string dtype(dtype_name(t.type.dtype));
    std::string name = t.name;
    out.append(nb::make_tuple(std::move(name), dtype, to_numpy(std::move(t))));
  }
  return out;
}

// ShapeCachedModel::prepare for (name, dtype, shape) per input: planned
// now unless the graph is built from the inputs' values.
bool prepare(ShapeCachedState& s,
             const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>& inputs,
             const std::map<std::string, int64_t>& sequence_lengths,
             const std::vector<std::string>& absent) {
  const onnx_io::CompositeInputs composites = composites_of(sequence_lengths, absent);
  std::vector<HostTensorView> views;
  for (const auto& [name, dtype, dims] : inputs) {
    const std::optional<DType> t = parse_dtype(dtype);
    if (!t) throw std::invalid_argument("input '" + name + "': unknown dtype '" + dtype + "'");
    views.push_back({name, TensorType{*t, Shape(dims.begin(), dims.end())}, {}});
  }
  nb::gil_scoped_release release;
  const std::lock_guard lock(s.session->mutex);
  return s.model->prepare(views, composites);
}

// The plan of the last run, as Session.plan's Plan wraps it (a copy: the
// cache may drop its entry). The device ranking and `dtype auto`'s counts
// are not kept by the cache, and so not in its JSON.
std::shared_ptr<PlanState> last_plan(const ShapeCachedState& s) {
  auto p = std::make_shared<PlanState>();
  p->model = s.path;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(s.session->mutex);
    p->planned.emplace(PlannedModel{.plan = s.model->plan()});
  }
  // Plan.export names the outputs from it: the planned graph's own.
  p->graph = std::make_shared<const Graph>(p->planned->plan.graph);
  p->session = s.session;
  return p;
}

nb::dict stats(const ShapeCachedState& s) {
  ShapeCacheStats st;
  size_t cached = 0;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(s.session->mutex);
    st = s.model->stats();
    cached = s.model->cached();
  }
  nb::dict d;
  d["runs"] = st.runs;
  d["plans"] = st.plans;
  d["evictions"] = st.evictions;
  d["last_plan_ms"] = st.last_plan_ms;
  d["total_plan_ms"] = st.total_plan_ms;
  d["cached"] = cached;
  return d;
}

}  // namespace

void add_shape_cached(nb::module_& m, nb::class_<SessionState>& session) {
  nb::class_<ShapeCachedState>(m, "ShapeCachedModel",
                               "A model planned per input shapes and values (ShapeCachedModel).")
      .def("run", &run, nb::arg("inputs"),
           nb::arg("sequence_lengths") = std::map<std::string, int64_t>{},
           nb::arg("absent") = std::vector<std::string>{},
           "One run of (name, dtype, array) per input (read in place; a sequence input's "
           "elements as NAME[0], NAME[1], ..., its length in sequence_lengths, optional inputs "
           "given as none in absent): planned and compiled first for shapes, lengths or values "
           "not in the cache. Returns (name, dtype, array) per output, named as imported (a "
           "sequence output's elements NAME[i]).")
      .def("prepare", &prepare, nb::arg("inputs"),
           nb::arg("sequence_lengths") = std::map<std::string, int64_t>{},
           nb::arg("absent") = std::vector<std::string>{},
           "Plan and compile for (name, dtype, shape) per input before any run; False when the "
           "graph is built from the inputs' values (planned at the first run).")
      .def("plan", &last_plan, "The plan of the last run (std::logic_error before the first).")
      .def("stats", &stats,
           "runs, plans (cache misses), evictions, last_plan_ms, total_plan_ms, cached.")
      .def(
          "cached",
          [](const ShapeCachedState& s) {
            nb::gil_scoped_release release;
            const std::lock_guard lock(s.session->mutex);
            return s.model->cached();
          },
          "How many compiled plans the cache holds.");
  session.def("shape_cached", &load, nb::arg("model"), nb::arg("amp") = "O2",
              nb::arg("dtype") = "auto", nb::arg("keep_fp32") = std::vector<std::string>{},
              nb::arg("force_16bit") = std::vector<std::string>{},
              nb::arg("place") = std::vector<std::pair<std::string, std::string>>{},
              nb::arg("white_list") = nb::none(), nb::arg("black_list") = nb::none(),
              nb::arg("cost") = true, nb::arg("tuned") = true, nb::arg("capability_blind") = false,
              nb::arg("capacity") = 4,
              "Session::load_shape_cached: MODEL (a .onnx path) planned with Session.plan's "
              "options at each run's input shapes and values, `capacity` compiled plans kept.");
}

}  // namespace ampx::python
