// The capability database: measured DeviceProfiles in SQLite, keyed by device
// fingerprint (docs/capability-db.md).
//
// Robustness rules:
//  - the schema is versioned (PRAGMA user_version) and marked as ours (PRAGMA
//    application_id); a file that is not a database, fails quick_check or
//    belongs to someone else is moved aside to "<path>.corrupt-<UTC time>", one
//    of a newer schema version to "<path>.v<N>-<UTC time>" (with a warning
//    naming both paths), and an empty database is built in its place; an
//    older version of ours is migrated in place, in one transaction;
//  - WAL journal, a busy timeout and BEGIN IMMEDIATE write transactions: two
//    probes writing at once serialise instead of failing or corrupting it;
//  - every write is one transaction: a failed put() leaves the old rows.
#pragma once

#include <ampx/capability/calibration.hpp>
#include <ampx/capability/profile.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ampx::capability {

// Schema version written to PRAGMA user_version; bump on any table change.
// Version 2 added node_timings and tuned_plans; a version 1 file is migrated
// in place (docs/capability-db.md).
inline constexpr int kStoreSchemaVersion = 2;
// PRAGMA application_id of an ampx capability database ("AMPX" in ASCII).
inline constexpr int32_t kStoreApplicationId = 0x414D5058;

// Where the database lives when --db is not given: $AMPX_CAPABILITY_DB, else
// $XDG_CACHE_HOME/ampx/capabilities.db, else ~/.cache/ampx/capabilities.db.
// Throws std::runtime_error when none of these variables is set.
std::filesystem::path default_db_path();
// `cli_path` when given and not empty, else default_db_path().
std::filesystem::path resolve_db_path(const std::optional<std::string>& cli_path);

// One line per stored device, for `ampx db list`.
struct ProfileSummary {
  std::string fingerprint;
  std::string device_id;
  std::string device_name;
  std::string plugin;
  std::string plugin_version;
  std::string probed_at;
  bool quick = false;
  int ops = 0;  // op timings stored (instances: op x shape class x dtype)
  int native = 0, emulated = 0, unsupported = 0;
  int measured = 0;  // of those, with a kernel time
};

// A plan `ampx tune` kept (docs/TUNING.md): the key is the model's content
// hash, the devices' fingerprints (in plan order, joined by ',') and the
// plan options; `plan_json` is the "ampx.tuned/1" document.
struct TunedPlanRecord {
  std::string model_hash;
  std::string devices;
  std::string options;
  std::string model_name;  // for notes about a stored plan that no longer matches
  std::string tuned_at;
  std::string plan_json;
};

class Store {
 public:
  // Opens (creating the file and its directory if needed) and checks it;
  // recovers a corrupted or other-version file as described above. Throws
  // std::runtime_error "capability database '<path>': <why>" when the path
  // cannot be created or written; an existing database is then untouched.
  static Store open(const std::filesystem::path& path);

  // For commands that only read (plan, run, db list, db export): opens
  // read-only and writes nothing, ever. No file: nothing (and none is
  // created). A file that open() would recover or migrate is left as it is,
  // with a warning, and gives nothing. A database in a read-only directory
  // is read as an immutable file. Throws only for a path that is not a
  // regular file (a directory, a device such as /dev/null, a FIFO).
  static std::optional<Store> open_read_only(const std::filesystem::path& path);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const noexcept { return path_; }

  // Replaces everything stored for profile.fingerprint, in one transaction.
  void put(const DeviceProfile& profile);
  // Several profiles in one transaction: all stored, or none (import).
  void put_all(const std::vector<DeviceProfile>& profiles);
  std::optional<DeviceProfile> get(const std::string& fingerprint) const;
  // By fingerprint.
  std::vector<ProfileSummary> list() const;
  std::vector<DeviceProfile> all() const;
  // Removes one fingerprint's rows; false if it was not stored.
  bool remove(const std::string& fingerprint);
  // In-context measurements of one device: each row replaces the stored
  // one of its signature (one transaction).
  void put_node_timings(const std::string& fingerprint, const std::vector<NodeTiming>& rows);
  // As stored; Calibration's constructor drops the unusable ones.
  std::vector<NodeTiming> node_timings(const std::string& fingerprint) const;

  void put_tuned_plan(const TunedPlanRecord& record);
  std::optional<TunedPlanRecord> tuned_plan(const std::string& model_hash,
                                            const std::string& devices,
                                            const std::string& options) const;
  // Whether a tuned plan is stored for these devices and options, whatever
  // the model (a lookup that finds none needs no model hash).
  bool has_tuned_plan_for(const std::string& devices, const std::string& options) const;
  // Every tuned plan stored for a model name (a file path or builtin:NAME),
  // to say why none matched.
  std::vector<TunedPlanRecord> tuned_plans_named(const std::string& model_name) const;

  // "ok", or SQLite's first complaint (PRAGMA quick_check).
  std::string quick_check() const;

 private:
  struct Db;
  Store(std::filesystem::path path, std::unique_ptr<Db> db);

  std::filesystem::path path_;
  std::unique_ptr<Db> db_;
};

// The profile the lead's planner and reports use for one device:
//  - with `profile_file`: select_profile() from that file (throws when the
//    file cannot be read; nullopt when it has no entry for the device);
//  - else the database at `db_path`: the entry for that fingerprint, or the
//    most recently probed one with that device id. A database file that does
//    not exist yields nullopt (it is not created just to be read).
// Pass the device's fingerprint (ampx_device_props::fingerprint) when you have
// the device: a device id alone may match the profile of another
// configuration or machine.
std::optional<DeviceProfile> load_profile_for(const std::string& device_id_or_fingerprint,
                                              const std::optional<std::string>& profile_file,
                                              const std::string& db_path);

}  // namespace ampx::capability
