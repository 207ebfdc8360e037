// ampx._ampx.Session.probe: `ampx probe` in this process. Each device's
// kernels, Casts and copies measured (capability::probe_device) and the
// profiles stored in the session's capability database, answered as `ampx
// probe --format json` answers (schema ampx.probe/1, one writer:
// apps/ampx/probe_output.hpp).
//
// In-process, not in a child per device as the CLI: the module cannot
// re-exec itself as `ampx`, and a second way of finding an executable would
// make the package's probe depend on what PATH holds. So a plugin that
// crashes takes Python down with it, and one that hangs hangs the call
// (`ampx probe` reports both); `timeout` is the probe's time budget.
#include "bindings.hpp"
#include "probe_output.hpp"
#include "progress.hpp"

#include <ampx/capability/probe.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/session/device_selection.hpp>

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <new>

namespace ampx::python {
namespace {

namespace cap = ampx::capability;

std::string probe(const std::shared_ptr<SessionState>& self, const std::string& devices, bool quick,
                  const std::vector<std::string>& ops, double timeout, nb::object progress) {
  if (timeout < 0) throw std::invalid_argument("timeout must be positive (None: the default)");
  cli::check_probe_ops(ops, "ops");
  cap::ProbeOptions po;
  po.quick = quick;
  po.ops = ops;
  po.budget_s = timeout > 0 ? timeout : (quick ? 60 : 300);

  // The database opened (and so checked writable) before any measuring, as
  // `ampx probe` does; then the devices, each once, in the order given.
  std::optional<cap::Store> store;
  std::vector<const plugins::Device*> todo;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(self->mutex);
    store.emplace(cap::Store::open(cap::resolve_db_path(self->db)));
    const plugins::PluginHost& host = self->session.host();
    if (devices.empty())
      for (const plugins::Device& d : host.devices()) todo.push_back(&d);
    for (const std::string& id : parse_device_list(devices)) {
      const plugins::Device* d = nullptr;
      try {
        d = &host.device(id);
      } catch (const std::invalid_argument& e) {
        throw DeviceFailure(e.what());
      }
      if (std::find(todo.begin(), todo.end(), d) == todo.end()) todo.push_back(d);
    }
  }
  if (todo.empty()) throw std::runtime_error("no devices found (see `ampx devices`)");
  // One bar per device, as the CLI draws them (made here: they hold `progress`).
  std::vector<std::unique_ptr<Progress>> bars;
  for (const plugins::Device* d : todo)
    bars.push_back(std::make_unique<Progress>(progress, d->id()));

  std::vector<cli::ProbeDeviceResult> results;
  std::string failures;
  std::string json;
  {
    nb::gil_scoped_release release;
    const std::lock_guard lock(self->mutex);
    for (size_t i = 0; i < todo.size(); ++i) {
      const plugins::Device& device = *todo[i];
      Progress& bar = *bars[i];
      cli::ProbeDeviceResult r;
      r.device = device.id();
      std::string version;
      for (const auto& p : self->session.host().plugins())
        if (p.name == device.plugin_name()) version = p.version;
      cap::ProbeProgress step;
      if (bar.active())
        step = [&bar](int done, int total, const std::string& what) {
          bar.update(done, total, what);
        };
      const auto start = std::chrono::steady_clock::now();
      const auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      try {
        const cap::DeviceProfile profile = cap::probe_device(device, version, po, step);
        r.seconds = seconds();
        cli::count_profile(profile, r);
        store->put(profile);
        r.stored = true;
        r.outcome = "stored";
      } catch (const nb::python_error&) {
        throw;  // the progress callable raised: stop there
      } catch (const std::bad_alloc&) {
        throw;
      } catch (const std::exception& e) {
        r.seconds = seconds();
        r.outcome = fmt::format("failed: {}", e.what());
      }
      bar.finish(cli::probe_finish_text(r));
      if (!r.stored) {
        spdlog::error("probe of {} {}", r.device, r.outcome);
        failures +=
            fmt::format("{}probe of {} {}", failures.empty() ? "" : "; ", r.device, r.outcome);
      }
      results.push_back(std::move(r));
    }
    json = cli::probe_json(results, store->path(), quick).dump(2);
  }
  // The CLI exits 1 with the others stored; Python raises, the others stored.
  if (!failures.empty()) throw DeviceFailure(failures);
  return json;
}

}  // namespace

void add_probe_method(nb::class_<SessionState>& session) {
  session.def("probe", &probe, nb::arg("devices") = "", nb::arg("quick") = false,
              nb::arg("ops") = std::vector<std::string>{}, nb::arg("timeout") = 0.0,
              nb::arg("progress") = nb::none(),
              "`ampx probe --format json` (ampx.probe/1), in this process: each device's "
              "profile measured and stored in the session's capability database.");
}

}  // namespace ampx::python
