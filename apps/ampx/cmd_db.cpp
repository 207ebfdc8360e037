// `ampx db list|export|import`: what the capability database holds, and
// moving profiles between machines as JSON (schema ampx.profile/1), so that
// a GPU's coverage can be reported on a laptop.
#include "commands.hpp"

#include <ampx/capability/profile_json.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/fileio/file_error.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

namespace cap = ampx::capability;

struct DbOptions {
  std::string db;  // empty: the default path
  Format format = Format::kText;
  std::string file;
  std::vector<std::string> devices;
  CLI::App* list = nullptr;
  CLI::App* exp = nullptr;
  CLI::App* imp = nullptr;
};

int run_list(const DbOptions& opts) {
  // Read-only: listing never creates, migrates or moves a database.
  const auto db_path = cap::resolve_db_path(db_option(opts.db));
  const auto store = cap::Store::open_read_only(db_path);
  const auto rows = store ? store->list() : std::vector<cap::ProfileSummary>{};
  if (opts.format == Format::kJson) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& r : rows)
      devices.push_back({{"fingerprint", r.fingerprint},
                         {"device_id", r.device_id},
                         {"device_name", r.device_name},
                         {"plugin", r.plugin},
                         {"plugin_version", r.plugin_version},
                         {"probed_at", r.probed_at},
                         {"quick", r.quick},
                         {"ops", r.ops},
                         {"measured", r.measured},
                         {"native", r.native},
                         {"emulated", r.emulated},
                         {"unsupported", r.unsupported}});
    std::cout << nlohmann::json{{"schema", "ampx.db-list/1"},
                                {"db", db_path.string()},
                                {"devices", devices}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format("capability database {} ({} devices)\n", db_path.string(), rows.size());
  // The text comes from a database (or a profile someone imported): control
  // characters are escaped, so a name cannot forge lines or terminal codes.
  const auto esc = [](const std::string& s) { return fileio::escape_control(s); };
  for (const auto& r : rows) {
    std::cout << fmt::format("  {:<14} {} ({} {})\n", esc(r.device_id), esc(r.device_name),
                             esc(r.plugin), esc(r.plugin_version));
    std::cout << fmt::format(
        "  {:<14} probed {}{}; {} timings: {} native, {} emulated, {} unsupported; {} measured\n",
        "", esc(r.probed_at), r.quick ? " (quick)" : "", r.ops, r.native, r.emulated, r.unsupported,
        r.measured);
    std::cout << fmt::format("  {:<14} fingerprint: {}\n", "", esc(r.fingerprint));
  }
  return 0;
}

int run_export(const DbOptions& opts) {
  const auto db_path = cap::resolve_db_path(db_option(opts.db));
  const auto store = cap::Store::open_read_only(db_path);
  const auto all = store ? store->all() : std::vector<cap::DeviceProfile>{};
  std::vector<cap::DeviceProfile> out;
  if (opts.devices.empty()) {
    out = all;
  } else {
    for (const auto& key : opts.devices) {
      auto p = cap::select_profile(all, key);
      if (!p)
        throw UsageError(fmt::format("--device '{}': no profile in {} (see `ampx db list`)", key,
                                     db_path.string()));
      out.push_back(std::move(*p));
    }
  }
  cap::save_profile_file(opts.file, out);
  std::cout << fmt::format("exported {} profile{} to {}\n", out.size(), out.size() == 1 ? "" : "s",
                           opts.file);
  return 0;
}

int run_import(const DbOptions& opts) {
  // Parse and check the whole file before the database is touched: a bad
  // file changes nothing.
  const auto profiles = cap::load_profile_file(opts.file);
  auto store = cap::Store::open(cap::resolve_db_path(db_option(opts.db)));
  store.put_all(profiles);
  std::cout << fmt::format("imported {} profile{} into {}\n", profiles.size(),
                           profiles.size() == 1 ? "" : "s", store.path().string());
  for (const auto& p : profiles) std::cout << fmt::format("  {} {}\n", p.device_id, p.fingerprint);
  return 0;
}

}  // namespace

Action add_db_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("db", "The capability database: list, export, import");
  cmd->require_subcommand(1);
  auto opts = std::make_shared<DbOptions>();
  const std::string db_help =
      "capability database (default: $AMPX_CAPABILITY_DB, else "
      "$XDG_CACHE_HOME/ampx/capabilities.db)";
  opts->list = cmd->add_subcommand("list", "Devices with stored profiles");
  opts->list->add_option("--db", opts->db, db_help);
  add_format_option(*opts->list, opts->format);
  opts->exp = cmd->add_subcommand("export", "Write profiles to a JSON file (ampx.profile/1)");
  opts->exp->add_option("FILE", opts->file, "output file (written atomically)")->required();
  opts->exp->add_option("--db", opts->db, db_help);
  opts->exp->add_option("--device", opts->devices, "fingerprint or device id (default: all)")
      ->take_all();
  opts->imp = cmd->add_subcommand("import", "Store the profiles of a JSON file (ampx.profile/1)");
  opts->imp->add_option("FILE", opts->file, "profile file")->required();
  opts->imp->add_option("--db", opts->db, db_help);
  return [opts] {
    if (opts->list->parsed()) return run_list(*opts);
    if (opts->exp->parsed()) return run_export(*opts);
    return run_import(*opts);
  };
}

}  // namespace ampx::cli
