// What the binding files of the `ampx._ampx` module share: the states the
// Python objects hold, and each file's registration function. The module
// wraps the Session (frontend/session) and nothing else: every call below
// is one the CLI (apps/ampx) makes too.
#pragma once

#include <ampx/session/session.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampx::python {

namespace nb = nanobind;

// A Session and the lock that keeps it, its plans and its compiled models
// to one thread at a time (a Session and its devices are used from one
// thread at a time, docs/SESSION.md). Every call that enters the Session
// releases the GIL first and then takes the lock, so two threads can run two
// sessions' models at once, and never one session's.
struct SessionState {
  explicit SessionState(SessionOptions options) : session(std::move(options)) {}
  Session session;
  std::mutex mutex;
  // SessionOptions::fallback, for the plan requests (`--no-fallback`).
  Fallback fallback = Fallback::kToReference;
  // SessionOptions::db_path, for probe (nullopt: capability::resolve_db_path's default).
  std::optional<std::string> db;
  // SessionOptions::max_memory_bytes (0: none), for compile's own limit.
  uint64_t max_memory = 0;
};

// The session's lock for a destructor: the GIL let go while waiting, so that
// a thread holding the lock and waiting for the GIL (a progress callback)
// can finish.
std::unique_lock<std::mutex> lock_for_destruction(SessionState& session);

// A plan and what it refers to: the graph it was planned from
// (PlannedModel::source points into it) and the session.
struct PlanState {
  std::shared_ptr<SessionState> session;
  std::shared_ptr<const Graph> graph;
  std::optional<PlannedModel> planned;
  std::string model;  // the MODEL spec, as `ampx plan` names it
  ~PlanState();
};

// A compiled model, kept with its plan (and so its graph and session).
struct CompiledState {
  std::shared_ptr<PlanState> plan;
  std::optional<CompiledModel> compiled;
  ~CompiledState();
};

// Thrown where a model is read: the module raises it as ampx.ModelError.
class ModelFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown for a device that is unknown, skipped or refused: ampx.DeviceError.
class DeviceFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Python's TypeError, from anywhere (a wrong dtype of an input array).
class TypeFailure : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The directory of this module's shared library (dladdr of the module):
// the package directory, whose `plugins/` holds the bundled plugins.
std::filesystem::path module_directory();

// The options every Session of the module starts from: the package's
// plugins (module_directory()/plugins) as ampx's own plugin directory, the
// log level set with set_log_level().
SessionOptions base_session_options();

// ampx.DeviceError naming every id of `devices` ("a,b" or "auto") that the
// session has no device for, with the host's reason (a skipped plugin).
void check_devices(const Session& session, const std::string& devices);

// The keyword arguments of Session.plan, as the CLI's planning flags
// (`--amp`, `--dtype`, `--keep-fp32`, `--force-16bit`, `--white-list`,
// `--black-list`, `--place`, `--no-cost`, `--no-tuned`,
// `--capability-blind`) give them.
struct PlanArgs {
  std::string amp = "O2";
  std::string dtype = "auto";
  std::vector<std::string> keep_fp32;
  std::vector<std::string> force_16bit;
  std::optional<std::string> white_list;
  std::optional<std::string> black_list;
  std::vector<std::pair<std::string, std::string>> place;
  CostUse costs = CostUse::kModel;
  TunedPlans tuned = TunedPlans::kUse;
  CapabilityUse capabilities = CapabilityUse::kAware;
};

// The PlanRequest the CLI makes of the same flags (apps/ampx/cli_common.cpp,
// PolicyOptions::plan_request); std::invalid_argument naming the keyword.
PlanRequest make_plan_request(const PlanArgs& args, const std::string& model, Fallback fallback);

// An input array as the module takes it: any dtype, shape and strides, on
// the host, read only; input_views() checks the rest.
using InputArray = nb::ndarray<nb::ro, nb::device::cpu>;

// The graph inputs a run takes, in order (the execution plan's, state left
// out: ExecutionPlan::state).
std::vector<const Value*> data_inputs(const ExecutionPlan& plan);

// A view of `a` as input `name` of `dtype`, its memory read in place:
// TypeFailure for another dtype (bf16 comes as uint16 bits or a DLPack
// bfloat16) or an array that is not C-contiguous. `name` must outlive it.
HostTensorView input_view(std::string_view name, DType dtype, const InputArray& a);

// Views of `arrays` for those inputs, reading each array's memory in place
// (no copy): TypeFailure for a dtype other than the input's (bf16 comes as
// uint16 bits or a DLPack bfloat16) or an array that is not C-contiguous,
// std::invalid_argument for a count or shape that differs.
std::vector<HostTensorView> input_views(const ExecutionPlan& plan,
                                        const std::vector<InputArray>& arrays);

// A run's output as a NumPy array that owns the tensor's bytes (moved, not
// copied); bf16 as its uint16 bits, which the package converts.
nb::object to_numpy(HostTensor&& tensor);

// Session.plan's keyword arguments (amp, dtype, keep_fp32, force_16bit,
// place, white_list, black_list, cost, tuned, capability_blind) as the
// PlanArgs make_plan_request takes: Session.plan's and Session.shape_cached's
// one mapping.
PlanArgs plan_args(const std::string& amp, const std::string& dtype,
                   const std::vector<std::string>& keep_fp32,
                   const std::vector<std::string>& force_16bit,
                   const std::vector<std::pair<std::string, std::string>>& place,
                   const std::optional<std::string>& white_list,
                   const std::optional<std::string>& black_list, bool cost, bool tuned,
                   bool capability_blind);

// Each file's part of the module.
void register_errors(nb::module_& m);
void register_devices(nb::module_& m);
void register_session(nb::module_& m);
void register_plan(nb::module_& m);
void register_compiled(nb::module_& m);
void register_signature(nb::module_& m);
// Session's long calls, each in a file of its own.
void add_tune_method(nb::class_<SessionState>& session);
void add_report_method(nb::class_<SessionState>& session);
void add_probe_method(nb::class_<SessionState>& session);
// Session.trainer and the Trainer class (and load_digits).
void add_trainer(nb::module_& m, nb::class_<SessionState>& session);
// Session.shape_cached and the ShapeCachedModel class (shape_cached.cpp).
void add_shape_cached(nb::module_& m, nb::class_<SessionState>& session);

}  // namespace ampx::python
