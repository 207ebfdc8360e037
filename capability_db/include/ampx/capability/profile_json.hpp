// DeviceProfile <-> JSON, and profile files: what `ampx db export` writes,
// `ampx db import` and `--profile FILE.json` read. A profile file is
//
//   {"schema": "ampx.profile/1", "devices": [ <DeviceProfile>, ... ]}
//
// (field by field in docs/capability-db.md). Readers accept exactly that
// schema string: a file from a future, incompatible format is refused rather
// than half understood.
#pragma once

#include <ampx/capability/profile.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::capability {

inline constexpr std::string_view kProfileSchema = "ampx.profile/1";

// "native", "emulated", "unsupported"; from_string throws std::invalid_argument
// for anything else.
std::string support_name(ampx_support s);
ampx_support support_from_name(std::string_view name);

nlohmann::json to_json(const DeviceProfile& profile);
// Throws std::runtime_error "<where>: <what is wrong>", e.g.
// "devices[0].ops[3]: missing field 'dtype'"; `where` prefixes the path.
DeviceProfile profile_from_json(const nlohmann::json& j, const std::string& where = "device");

// The whole file document for these profiles.
nlohmann::json profile_document(const std::vector<DeviceProfile>& profiles);
// Parses a whole document; errors start with `source` (usually the file name):
// "profile.json: schema 'ampx.profile/2' is not supported (expected ampx.profile/1)".
std::vector<DeviceProfile> profiles_from_document(const nlohmann::json& doc,
                                                  const std::string& source);

// Reads and parses a profile file. Throws std::runtime_error naming the file
// and the problem (unreadable, bad JSON, wrong schema, missing field) in one line.
std::vector<DeviceProfile> load_profile_file(const std::filesystem::path& file);
// Writes atomically: a temporary file next to `file`, then rename, so a
// reader never sees half a file and a failed write leaves the old one intact.
// Throws std::runtime_error naming the file.
void save_profile_file(const std::filesystem::path& file,
                       const std::vector<DeviceProfile>& profiles);

// The profile whose fingerprint equals `device_id_or_fingerprint`, else the
// most recently probed one whose device_id does; nullopt if none matches.
std::optional<DeviceProfile> select_profile(const std::vector<DeviceProfile>& profiles,
                                            const std::string& device_id_or_fingerprint);

}  // namespace ampx::capability
