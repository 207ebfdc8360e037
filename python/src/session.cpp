// ampx._ampx.Session: SessionOptions once, then plan (load + Session::plan)
// and compile (Session::compile), each with the GIL released and the
// session's lock held (bindings.hpp).
#include "bindings.hpp"

#include "error_message.hpp"

#include <ampx/exec/host_tensor.hpp>
#include <ampx/session/device_selection.hpp>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <spdlog/spdlog.h>

#include <map>
#include <new>

namespace ampx::python {

SessionOptions base_session_options() {
  SessionOptions o;
  if (const std::filesystem::path dir = module_directory(); !dir.empty())
    o.own_plugin_dirs.push_back(dir / "plugins");
  o.log_level = static_cast<int>(spdlog::get_level());
  return o;
}

void check_devices(const Session& session, const std::string& devices) {
  if (devices.empty() || devices == "auto") return;
  for (const std::string& id : parse_device_list(devices)) {
    try {
      (void)session.host().device(id);
    } catch (const std::invalid_argument& e) {
      throw DeviceFailure(e.what());
    }
  }
}

std::unique_lock<std::mutex> lock_for_destruction(SessionState& session) {
  if (PyGILState_Check() == 0) return std::unique_lock(session.mutex);
  nb::gil_scoped_release release;
  return std::unique_lock(session.mutex);
}

PlanState::~PlanState() {
  if (!session || !planned) return;
  const auto lock = lock_for_destruction(*session);
  planned.reset();
}

CompiledState::~CompiledState() {
  if (!plan || !compiled) return;
  const auto lock = lock_for_destruction(*plan->session);
  compiled.reset();  // the devices' memory back, on the session's thread of the moment
}

namespace {

Determinism parse_determinism(const std::string& text) {
  if (text == "thread-count-free") return Determinism::kThreadCountFree;
  if (text == "fastest") return Determinism::kFastest;
  throw std::invalid_argument("determinism '" + text + "': expected thread-count-free or fastest");
}

void init_session(SessionState* self, const std::string& devices,
                  const std::optional<std::string>& db, int threads, bool fallback,
                  const std::vector<std::string>& plugin_dirs,
                  const std::vector<std::string>& exclude_plugins, bool trust_plugins,
                  const std::string& determinism, bool use_tuned, uint64_t max_memory) {
  if (threads < 0) throw std::invalid_argument("threads must be 0 (the default) or more");
  SessionOptions o = base_session_options();
  o.devices = devices;
  o.db_path = db;
  o.threads = threads;
  o.fallback = fallback;
  for (const std::string& d : plugin_dirs) o.plugin_dirs.emplace_back(d);
  o.excluded_plugins = exclude_plugins;
  o.trust_plugins = trust_plugins;
  o.determinism = parse_determinism(determinism);
  o.use_tuned = use_tuned;
  // Every model this session compiles, the Trainer's steps included, as
  // `--max-memory` bounds them in the CLI.
  o.max_memory_bytes = max_memory;
  o.max_memory_origin = "Session(max_memory)";
  if (!devices.empty() && devices != "auto") (void)parse_device_list(devices);
  {
    nb::gil_scoped_release release;  // plugin pre-flight children
    new (self) SessionState(std::move(o));
  }
  self->fallback = fallback ? Fallback::kToReference : Fallback::kRefuse;
  self->db = db;
  self->max_memory = max_memory;
  try {
    check_devices(self->session, devices);
  } catch (...) {
    self->~SessionState();
    throw;
  }
}

std::shared_ptr<PlanState> plan(std::shared_ptr<SessionState> self, const std::string& model,
                                const std::string& amp, const std::string& dtype,
                                const std::vector<std::string>& keep_fp32,
                                const std::vector<std::string>& force_16bit,
                                const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                const std::vector<std::pair<std::string, std::string>>& place,
                                const std::optional<std::string>& white_list,
                                const std::optional<std::string>& black_list, bool cost, bool tuned,
                                bool capability_blind) {
  PlanRequest request =
      make_plan_request(plan_args(amp, dtype, keep_fp32, force_16bit, place, white_list, black_list,
                                  cost, tuned, capability_blind),
                        model, self->fallback);
  ModelOptions mo;
  for (const auto& [name, dims] : input_shapes) {
    for (int64_t d : dims)
      if (d <= 0)
        throw std::invalid_argument("input_shapes['" + name + "']: dimensions must be positive");
    mo.input_shapes[name] = Shape(dims.begin(), dims.end());
  }
  auto state = std::make_shared<PlanState>();
  state->model = model;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(self->mutex);
    try {
      state->graph = std::make_shared<const Graph>(self->session.load(model, mo));
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      throw ModelFailure(cli::error_message(e));
    }
    state->planned.emplace(self->session.plan(*state->graph, request));
  }
  state->session = std::move(self);
  return state;
}

std::shared_ptr<CompiledState> compile(const std::shared_ptr<SessionState>& self,
                                       const std::shared_ptr<PlanState>& plan, bool eager,
                                       bool fuse, bool check, uint64_t max_memory) {
  if (plan->session != self)
    throw std::invalid_argument("the plan was made by another Session: compile it there");
  CompileOptions co;
  co.mode = eager ? ExecutionMode::kEager : ExecutionMode::kCompiled;
  if (!fuse) co.fusion = {.fold_batchnorm = false, .epilogues = false};
  co.reference = check ? ReferenceCheck::kPrepare : ReferenceCheck::kNone;
  // compile(max_memory=...) for this model, else the Session's.
  co.memory = MemoryLimit{.max_bytes = max_memory ? max_memory : self->max_memory,
                          .origin = max_memory ? "compile(max_memory)" : "Session(max_memory)",
                          .host_bytes = host_tensor_bytes(*plan->graph)};
  auto state = std::make_shared<CompiledState>();
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(plan->session->mutex);
    state->compiled.emplace(plan->session->session.compile(*plan->planned, co));
  }
  state->plan = plan;
  return state;
}

}  // namespace

void register_session(nb::module_& m) {
  nb::class_<SessionState> session(
      m, "Session", "The one pipeline (ampx::Session): plugins, devices, plan, compile.");
  add_tune_method(session);
  add_report_method(session);
  add_probe_method(session);
  add_trainer(m, session);
  add_shape_cached(m, session);
  session
      .def("__init__", &init_session, nb::arg("devices") = "", nb::arg("db") = nb::none(),
           nb::arg("threads") = 0, nb::arg("fallback") = true,
           nb::arg("plugin_dirs") = std::vector<std::string>{},
           nb::arg("exclude_plugins") = std::vector<std::string>{},
           nb::arg("trust_plugins") = false, nb::arg("determinism") = "thread-count-free",
           nb::arg("use_tuned") = true, nb::arg("max_memory") = 0)
      .def("plan", &plan, nb::arg("model"), nb::arg("amp") = "O2", nb::arg("dtype") = "auto",
           nb::arg("keep_fp32") = std::vector<std::string>{},
           nb::arg("force_16bit") = std::vector<std::string>{},
           nb::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
           nb::arg("place") = std::vector<std::pair<std::string, std::string>>{},
           nb::arg("white_list") = nb::none(), nb::arg("black_list") = nb::none(),
           nb::arg("cost") = true, nb::arg("tuned") = true, nb::arg("capability_blind") = false,
           "Load MODEL (builtin:NAME or a .onnx path) and plan it: Session::plan.")
      .def("compile", &compile, nb::arg("plan"), nb::arg("eager") = false, nb::arg("fuse") = true,
           nb::arg("check") = false, nb::arg("max_memory") = 0,
           "Session::compile: fusion, kernels, weights on the devices.")
      .def_prop_ro(
          "device_ids",
          [](const SessionState& s) {
            std::vector<std::string> ids;
            for (const plugins::Device& d : s.session.host().devices()) ids.push_back(d.id());
            return ids;
          },
          "Every device the session's plugins have.");
}

}  // namespace ampx::python
