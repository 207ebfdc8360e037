// ampx._ampx.Session.tune: Session::tune from an untuned plan of the
// session (docs/TUNING.md), answered as `ampx tune --format json`
// (schema ampx.tune/1) answers.
#include "bindings.hpp"
#include "plan_output.hpp"
#include "progress.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

namespace ampx::python {
namespace {

std::string tune(const std::shared_ptr<SessionState>& self, const std::shared_ptr<PlanState>& plan,
                 bool store, int max_replans, int profile_runs, int verify_rounds, int verify_runs,
                 uint64_t seed, nb::object progress) {
  if (plan->session != self)
    throw std::invalid_argument("the plan was made by another Session: tune it there");
  if (!plan->planned->plan.tuned.empty())
    throw std::invalid_argument(
        "tune starts from an untuned plan: plan with tuned=False (this one applies a stored "
        "tuned plan)");
  if (max_replans < 1 || profile_runs < 1 || verify_rounds < 1 || verify_runs < 1)
    throw std::invalid_argument(
        "max_replans, profile_runs, verify_rounds and verify_runs must be 1 or more");
  TuneOptions o;
  o.max_replans = max_replans;
  o.profile_runs = profile_runs;
  o.verify_rounds = verify_rounds;
  o.verify_runs = verify_runs;
  o.seed = seed;
  o.store = store;
  Progress bar(std::move(progress), "tune " + plan->planned->plan.device_id);
  if (bar.active())
    o.progress = [&bar](double f, std::string_view what) {
      bar.update(static_cast<int>(f * 100), 100, std::string(what));
    };
  std::string json;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(self->mutex);
    const TuneResult r = self->session.tune(*plan->graph, *plan->planned, o);
    bar.finish(r.kept);
    nlohmann::json j = nlohmann::json::parse(tuned_plan_json(r));
    j["schema"] = "ampx.tune/1";
    j["stored"] = r.stored;
    j["plan"] = cli::plan_to_json(r.plan, plan->model);
    json = j.dump(2);
  }
  return json;
}

}  // namespace

void add_tune_method(nb::class_<SessionState>& session) {
  session.def("tune", &tune, nb::arg("plan"), nb::arg("store") = true, nb::arg("max_replans") = 4,
              nb::arg("profile_runs") = 10, nb::arg("verify_rounds") = 5,
              nb::arg("verify_runs") = 10, nb::arg("seed") = 1, nb::arg("progress") = nb::none(),
              "Session::tune from an untuned plan: `ampx tune --format json` (ampx.tune/1).");
}

}  // namespace ampx::python
