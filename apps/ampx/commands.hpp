// The ampx subcommands. Each registers its options on a CLI11 subcommand and
// returns the function that runs it once parsing succeeded.
#pragma once

#include "cli_common.hpp"

#include <functional>

namespace ampx::cli {

using Action = std::function<int()>;

Action add_devices_command(CLI::App& app, const GlobalOptions& global);
Action add_plan_command(CLI::App& app, const GlobalOptions& global);
Action add_export_command(CLI::App& app, const GlobalOptions& global);
Action add_run_command(CLI::App& app, const GlobalOptions& global);
Action add_summary_command(CLI::App& app, const GlobalOptions& global);
Action add_report_command(CLI::App& app, const GlobalOptions& global);
Action add_probe_command(CLI::App& app, const GlobalOptions& global);
Action add_probe_child_command(CLI::App& app, const GlobalOptions& global);
Action add_db_command(CLI::App& app, const GlobalOptions& global);
Action add_tune_command(CLI::App& app, const GlobalOptions& global);
Action add_plugin_check_command(CLI::App& app, const GlobalOptions& global);
Action add_train_command(CLI::App& app, const GlobalOptions& global);

}  // namespace ampx::cli
