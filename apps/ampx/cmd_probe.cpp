// `ampx probe`: measures every device (or those given) and stores the
// profiles in the capability database. Each device is probed by a child
// process, `ampx probe-child` (hidden), that loads only that device's plugin:
// a plugin that crashes or hangs is reported (signal name, or timed out and
// killed) and the other devices are still probed and stored.
#include "commands.hpp"
#include "probe_output.hpp"
#include "progress_bar.hpp"

#include <ampx/capability/probe.hpp>
#include <ampx/capability/probe_isolation.hpp>
#include <ampx/capability/profile_json.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/fileio/private_temp_dir.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

namespace ampx::cli {
namespace {

namespace cap = ampx::capability;

struct ProbeCliOptions {
  std::vector<std::string> devices;
  bool quick = false;
  std::string db;        // empty: the default path
  double timeout_s = 0;  // 0: 300, or 60 with --quick
  std::string ops;       // comma-separated op types (tests keep probes short)
  Format format = Format::kText;
};

struct ChildCliOptions {
  std::string device;
  std::string out;
  bool quick = false;
  std::string ops;
  double budget_s = 0;
  std::string exclude_plugins;
};

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    std::string item = s.substr(b, e - b);
    const auto f = item.find_first_not_of(" \t"), l = item.find_last_not_of(" \t");
    if (f != std::string::npos) out.push_back(item.substr(f, l - f + 1));
    b = e + 1;
  }
  return out;
}

// The arguments that re-create this process's plugin setup in the child.
std::vector<std::string> global_args(const GlobalOptions& g) {
  std::vector<std::string> a;
  for (const auto& d : g.plugin_dirs) {
    a.push_back("--plugin-dir");
    a.push_back(std::filesystem::absolute(d).string());
  }
  if (g.threads > 0) a.insert(a.end(), {"--threads", std::to_string(g.threads)});
  if (!g.log_level.empty()) a.insert(a.end(), {"--log-level", g.log_level});
  if (g.verbose) a.push_back("--verbose");
  return a;
}

ProbeDeviceResult probe_one(const GlobalOptions& global, const ProbeCliOptions& opts,
                            const std::string& device, const std::string& exclude, double timeout_s,
                            cap::Store& store) {
  ProbeDeviceResult r;
  r.device = device;
  // The child's hand-off file, in a directory only this user can enter.
  const fileio::PrivateTempDir handoff;
  const auto out = handoff.path() / "profile.json";
  std::vector<std::string> argv{cap::self_executable()};
  for (auto& a : global_args(global)) argv.push_back(std::move(a));
  argv.insert(argv.end(), {"probe-child", "--device", device, "--out", out.string(), "--budget",
                           fmt::format("{:.1f}", timeout_s * 0.8)});
  if (!exclude.empty()) argv.insert(argv.end(), {"--exclude-plugins", exclude});
  if (opts.quick) argv.push_back("--quick");
  if (!opts.ops.empty()) argv.insert(argv.end(), {"--ops", opts.ops});

  ProgressBar bar(device);
  std::string child_error;
  const auto outcome = cap::run_child(argv, timeout_s, [&](const std::string& line) {
    // "progress <done> <total> <what>" or "error <message>"; anything else
    // (a chatty plugin printing to stdout) is only logged.
    if (line.rfind("progress ", 0) == 0) {
      int done = 0, total = 0, consumed = 0;
      if (std::sscanf(line.c_str(), "progress %d %d %n", &done, &total, &consumed) >= 2)
        bar.update(done, total, line.substr(static_cast<size_t>(consumed)));
    } else if (line.rfind("error ", 0) == 0) {
      child_error = line.substr(6);
    } else {
      spdlog::debug("probe {}: {}", device, line);
    }
  });
  r.seconds = outcome.seconds;
  std::error_code ec;
  switch (outcome.kind) {
    case cap::ChildOutcome::Kind::kSignaled:
      r.outcome = fmt::format("crashed: {}", cap::signal_name(outcome.signal));
      break;
    case cap::ChildOutcome::Kind::kTimedOut:
      r.outcome = fmt::format("timed out after {:.0f} s (killed)", timeout_s);
      break;
    case cap::ChildOutcome::Kind::kExited:
      if (outcome.exit_code != 0)
        r.outcome = fmt::format("failed (exit code {}){}", outcome.exit_code,
                                child_error.empty() ? "" : ": " + child_error);
      break;
  }
  if (outcome.ok()) {
    try {
      const auto profiles = cap::load_profile_file(out);
      if (profiles.size() != 1)
        throw std::runtime_error("expected one device in the child's output");
      const auto& p = profiles.front();
      count_profile(p, r);
      store.put(p);
      r.stored = true;
      r.outcome = "stored";
    } catch (const std::exception& e) {
      r.outcome = fmt::format("failed: {}", e.what());
    }
  }
  bar.finish(probe_finish_text(r));
  if (!r.stored) spdlog::error("probe of {} {}", device, r.outcome);
  return r;
}

int run_probe(const GlobalOptions& global, const ProbeCliOptions& opts) {
  const double timeout_s = opts.timeout_s > 0 ? opts.timeout_s : (opts.quick ? 60 : 300);
  check_probe_ops(split_csv(opts.ops), "--ops");
  // Open (and check) the database first: an unwritable path should fail
  // before minutes of measuring, not after.
  cap::Store store = cap::Store::open(cap::resolve_db_path(db_option(opts.db)));

  // Which devices, and which plugins each child must leave alone.
  std::vector<std::pair<std::string, std::string>> todo;  // device id, plugin
  std::set<std::string> plugin_names;
  {
    const Session session(session_options(global));
    const plugins::PluginHost& host = session.host();
    for (const auto& p : host.plugins()) plugin_names.insert(p.name);
    for (const auto& s : host.skipped()) plugin_names.insert(s.name_hint);
    if (opts.devices.empty())
      for (const auto& d : host.devices()) todo.emplace_back(d.id(), d.plugin_name());
    for (const auto& id : opts.devices) {
      const auto& d = find_device(host, id);
      const std::pair<std::string, std::string> entry{d.id(), d.plugin_name()};
      if (std::find(todo.begin(), todo.end(), entry) == todo.end()) todo.push_back(entry);
    }
  }  // plugins unloaded: the children do the work
  if (todo.empty()) throw std::runtime_error("no devices found (see `ampx devices`)");

  std::vector<ProbeDeviceResult> results;
  for (const auto& [id, plugin] : todo) {
    std::string exclude;
    for (const auto& n : plugin_names)
      if (n != plugin && !n.empty()) exclude += (exclude.empty() ? "" : ",") + n;
    results.push_back(probe_one(global, opts, id, exclude, timeout_s, store));
  }

  const bool all_ok = std::all_of(results.begin(), results.end(), [](auto& r) { return r.stored; });
  if (opts.format == Format::kJson)
    std::cout << probe_json(results, store.path(), opts.quick).dump(2) << "\n";
  else
    std::cout << probe_table(results, store.path());
  return all_ok ? 0 : 1;
}

int run_probe_child(const GlobalOptions& global, const ChildCliOptions& opts) {
  // stdout is the parent's pipe: one line per message, flushed at once.
  try {
    SessionOptions so;
    // The parent pre-flighted the plugins (or was told to trust them), and
    // this process is itself the probe's isolation.
    so.trust_plugins = true;
    for (const auto& d : global.plugin_dirs) so.plugin_dirs.emplace_back(d);
    so.log_level = static_cast<int>(spdlog::get_level());
    so.threads = global.threads;
    so.excluded_plugins = split_csv(opts.exclude_plugins);
    const Session session(std::move(so));
    const plugins::PluginHost& host = session.host();
    const auto& device = find_device(host, opts.device);
    std::string version;
    for (const auto& p : host.plugins())
      if (p.name == device.plugin_name()) version = p.version;
    cap::ProbeOptions po;
    po.quick = opts.quick;
    po.ops = split_csv(opts.ops);
    po.budget_s = opts.budget_s;
    const auto profile =
        cap::probe_device(device, version, po, [](int done, int total, const std::string& what) {
          std::printf("progress %d %d %s\n", done, total, what.c_str());
          std::fflush(stdout);
        });
    cap::save_profile_file(opts.out, {profile});
    return 0;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::printf("error %s\n", msg.c_str());
    std::fflush(stdout);
    throw;
  }
}

}  // namespace

Action add_probe_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "probe",
      "Measure each device's kernels (16-bit and f32), Casts and copies into the "
      "capability database (docs/capability-db.md)");
  auto opts = std::make_shared<ProbeCliOptions>();
  cmd->add_option("--device", opts->devices, "device id to probe (repeatable; default: all)")
      ->take_all();
  cmd->add_flag("--quick", opts->quick, "fewer and smaller shapes, fewer repeats (< 1 min)");
  cmd->add_option("--db", opts->db,
                  "capability database (default: $AMPX_CAPABILITY_DB, else "
                  "$XDG_CACHE_HOME/ampx/capabilities.db)");
  cmd->add_option("--timeout", opts->timeout_s,
                  "seconds per device before its probe is killed (default 300; 60 with --quick)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ops", opts->ops, "only these op types, comma-separated (e.g. Conv2d,Relu)");
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_probe(global, *opts); };
}

Action add_probe_child_command(CLI::App& app, const GlobalOptions& global) {
  // Internal: started by `ampx probe`, one per device.
  auto* cmd = app.add_subcommand("probe-child", "");
  cmd->group("");  // hidden from --help
  auto opts = std::make_shared<ChildCliOptions>();
  cmd->add_option("--device", opts->device)->required();
  cmd->add_option("--out", opts->out)->required();
  cmd->add_flag("--quick", opts->quick);
  cmd->add_option("--ops", opts->ops);
  cmd->add_option("--budget", opts->budget_s);
  cmd->add_option("--exclude-plugins", opts->exclude_plugins);
  return [&global, opts] { return run_probe_child(global, *opts); };
}

}  // namespace ampx::cli
