// The ampx command line. Errors are one line on stderr and a non-zero exit:
// 2 for a bad argument, 1 for anything that failed while working.
#include "commands.hpp"
#include "error_message.hpp"

#include <ampx/ir/graph.hpp>

#include <spdlog/spdlog.h>

#include <iostream>
#include <map>

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer an allocation too large to make is an abort by
// default, where the real allocator returns NULL: `ampx plugin-check` asks
// plugins for 2^62 bytes to see that they refuse with a status. ASAN_OPTIONS
// still overrides this.
extern "C" __attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}
#endif

int main(int argc, char** argv) {
  using namespace ampx::cli;
  CLI::App app{"ampx: automatic mixed precision, honest about the hardware", "ampx"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ampx 0.1.0");
  GlobalOptions global;
  app.add_flag("-v,--verbose", global.verbose, "debug logging on stderr");
  app.add_option("--log-level", global.log_level, "trace, debug, info, warn (default), error, off");
  app.add_option("--plugin-dir", global.plugin_dirs, "extra plugin directory, searched first")
      ->check(kExistingDirectory)
      ->take_all();
  app.add_option("--exclude-plugin", global.excluded_plugins,
                 "plugin name not to load at all, e.g. a misbehaving driver (repeatable; "
                 "AMPX_DISABLE_PLUGINS=a,b does the same)")
      ->take_all();
  app.add_flag("--trust-plugins", global.trust_plugins,
               "load plugins in-process at once, without the pre-flight child that catches a "
               "plugin crashing, hanging or exiting while it loads (docs/PLUGINS.md)");
  app.add_option("--threads", global.threads,
                 "threads per CPU backend (passed to plugins as threads=N; default: all cores)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--determinism", global.determinism,
                 "thread-count-free (default): every node's bits are the same at any --threads, "
                 "a threaded oneDNN kernel that breaks this runs on one thread; fastest: keep it "
                 "threaded (deterministic=0 to plugins; docs/OPS.md, \"Determinism\")")
      ->check(CLI::IsMember({"thread-count-free", "fastest"}))
      ->capture_default_str();

  std::map<CLI::App*, Action> actions;
  auto add = [&](Action (*adder)(CLI::App&, const GlobalOptions&)) {
    const size_t before = app.get_subcommands({}).size();
    Action a = adder(app, global);
    actions[app.get_subcommands({}).at(before)] = std::move(a);
  };
  add(add_devices_command);
  add(add_plan_command);
  add(add_run_command);
  add(add_tune_command);
  add(add_export_command);
  add(add_summary_command);
  add(add_report_command);
  add(add_probe_command);
  add(add_probe_child_command);
  add(add_db_command);
  add(add_plugin_check_command);
  add(add_train_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 would print two lines; a bad argument gets one, and exit code 2.
    const auto rest = app.remaining();
    if (!rest.empty() && app.get_subcommands().empty())
      print_error_line("unknown command '" + rest.front() + "' (see ampx --help)");
    else
      print_error_line(std::string(e.what()) + " (see ampx --help)");
    return 2;
  }
  try {
    setup_logging(global);
    for (auto& [cmd, action] : actions)
      if (cmd->parsed()) return action();
  } catch (const std::invalid_argument& e) {  // bad argument, UsageError included
    print_error_line(error_message(e));
    return 2;
  } catch (const std::exception& e) {
    print_error_line(error_message(e));
    return 1;
  }
  return 1;
}
