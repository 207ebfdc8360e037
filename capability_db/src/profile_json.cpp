#include <ampx/capability/profile_json.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/plugin_support.hpp>

#include <fmt/format.h>

#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace ampx::capability {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

const json& field(const json& obj, const std::string& where, const char* name) {
  if (!obj.is_object()) fail(where, "expected an object");
  const auto it = obj.find(name);
  if (it == obj.end()) fail(where, std::string("missing field '") + name + "'");
  return *it;
}

std::string get_string(const json& obj, const std::string& where, const char* name) {
  const json& v = field(obj, where, name);
  if (!v.is_string()) fail(where, std::string("field '") + name + "' must be a string");
  return v.get<std::string>();
}

// Optional string members (notes) default to empty: older writers may omit them.
std::string get_string_or(const json& obj, const char* name, std::string dflt) {
  const auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : dflt;
}

// Every number of a profile is a count, a size or a time: finite and >= 0.
double get_number(const json& obj, const std::string& where, const char* name) {
  const json& v = field(obj, where, name);
  if (!v.is_number()) fail(where, std::string("field '") + name + "' must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0)
    fail(where, fmt::format("field '{}' is {}: expected a finite number >= 0", name, v.dump()));
  return d;
}

const json& get_array(const json& obj, const std::string& where, const char* name) {
  const json& v = field(obj, where, name);
  if (!v.is_array()) fail(where, std::string("field '") + name + "' must be an array");
  return v;
}

bool is_known_dtype(const std::string& d) {
  return d == "f32" || d == "f16" || d == "bf16";
}

std::string checked_dtype(const json& obj, const std::string& where, const char* name) {
  std::string d = get_string(obj, where, name);
  if (!is_known_dtype(d))
    fail(where, std::string("field '") + name + "': unknown dtype '" + d +
                    "' (expected f32, f16 or bf16)");
  return d;
}

}  // namespace

std::string support_name(ampx_support s) {
  return plugin_support::support_name(s);
}

ampx_support support_from_name(std::string_view name) {
  if (name == "native") return AMPX_SUPPORT_NATIVE;
  if (name == "emulated") return AMPX_SUPPORT_EMULATED;
  if (name == "unsupported") return AMPX_SUPPORT_UNSUPPORTED;
  throw std::invalid_argument(
      fmt::format("unknown support '{}' (expected native, emulated or unsupported)", name));
}

json to_json(const DeviceProfile& p) {
  json ops = json::array();
  for (const auto& o : p.ops)
    ops.push_back({{"op", o.op},
                   {"dtype", o.dtype},
                   {"shape_class", o.shape_class},
                   {"flops", o.flops},
                   {"bytes", o.bytes},
                   {"support", support_name(o.support)},
                   {"note", o.note},
                   // null, not -1: "not measured" should not look like a time.
                   {"time_us", o.time_us < 0 ? json(nullptr) : json(o.time_us)}});
  json casts = json::array();
  for (const auto& c : p.casts)
    casts.push_back({{"from", c.from}, {"to", c.to}, {"ns_per_element", c.ns_per_element}});
  json copies = json::array();
  for (const auto& c : p.copies)
    copies.push_back(
        {{"direction", c.direction}, {"latency_us", c.latency_us}, {"ns_per_byte", c.ns_per_byte}});
  return {{"fingerprint", p.fingerprint}, {"device_id", p.device_id},
          {"plugin", p.plugin},           {"plugin_version", p.plugin_version},
          {"device_name", p.device_name}, {"driver_version", p.driver_version},
          {"probed_at", p.probed_at},     {"quick", p.quick},
          {"ops", std::move(ops)},        {"casts", std::move(casts)},
          {"copies", std::move(copies)}};
}

DeviceProfile profile_from_json(const json& j, const std::string& where) {
  DeviceProfile p;
  p.fingerprint = get_string(j, where, "fingerprint");
  if (p.fingerprint.empty()) fail(where, "field 'fingerprint' is empty");
  p.device_id = get_string(j, where, "device_id");
  p.plugin = get_string(j, where, "plugin");
  p.plugin_version = get_string(j, where, "plugin_version");
  p.device_name = get_string(j, where, "device_name");
  p.driver_version = get_string(j, where, "driver_version");
  p.probed_at = get_string(j, where, "probed_at");
  const json& quick = field(j, where, "quick");
  if (!quick.is_boolean()) fail(where, "field 'quick' must be true or false");
  p.quick = quick.get<bool>();

  const json& ops = get_array(j, where, "ops");
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string w = where + ".ops[" + std::to_string(i) + "]";
    const json& o = ops[i];
    OpTiming t;
    t.op = get_string(o, w, "op");
    t.dtype = checked_dtype(o, w, "dtype");
    t.shape_class = get_string(o, w, "shape_class");
    t.flops = get_number(o, w, "flops");
    t.bytes = get_number(o, w, "bytes");
    try {
      t.support = support_from_name(get_string(o, w, "support"));
    } catch (const std::invalid_argument& e) {
      fail(w, std::string("field 'support': ") + e.what());
    }
    t.note = get_string_or(o, "note", "");
    t.time_us = field(o, w, "time_us").is_null() ? -1 : get_number(o, w, "time_us");
    p.ops.push_back(std::move(t));
  }
  const json& casts = get_array(j, where, "casts");
  for (size_t i = 0; i < casts.size(); ++i) {
    const std::string w = where + ".casts[" + std::to_string(i) + "]";
    p.casts.push_back({checked_dtype(casts[i], w, "from"), checked_dtype(casts[i], w, "to"),
                       get_number(casts[i], w, "ns_per_element")});
  }
  const json& copies = get_array(j, where, "copies");
  for (size_t i = 0; i < copies.size(); ++i) {
    const std::string w = where + ".copies[" + std::to_string(i) + "]";
    CopyCost c{get_string(copies[i], w, "direction"), get_number(copies[i], w, "latency_us"),
               get_number(copies[i], w, "ns_per_byte")};
    if (c.direction != "h2d" && c.direction != "d2h")
      fail(w, "field 'direction': '" + c.direction + "' (expected h2d or d2h)");
    p.copies.push_back(std::move(c));
  }
  return p;
}

json profile_document(const std::vector<DeviceProfile>& profiles) {
  json devices = json::array();
  for (const auto& p : profiles) devices.push_back(to_json(p));
  return {{"schema", std::string(kProfileSchema)}, {"devices", std::move(devices)}};
}

std::vector<DeviceProfile> profiles_from_document(const json& doc, const std::string& source) {
  if (!doc.is_object()) fail(source, "expected a JSON object with 'schema' and 'devices'");
  const auto schema = doc.find("schema");
  if (schema == doc.end()) fail(source, "missing field 'schema' (expected ampx.profile/1)");
  if (!schema->is_string() || schema->get<std::string>() != kProfileSchema)
    fail(source, fmt::format("schema {} is not supported (expected {})",
                             schema->is_string() ? fmt::format("'{}'", schema->get<std::string>())
                                                 : schema->dump(),
                             kProfileSchema));
  const json& devices = get_array(doc, source, "devices");
  std::vector<DeviceProfile> out;
  for (size_t i = 0; i < devices.size(); ++i)
    out.push_back(profile_from_json(devices[i], source + ": devices[" + std::to_string(i) + "]"));
  return out;
}

std::vector<DeviceProfile> load_profile_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  // A regular file only (a FIFO would block), 256 MiB at most.
  const std::string text = fileio::read_regular_file(file, uint64_t{256} << 20);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // nlohmann's message carries the byte position; keep it on one line,
    // without the library's "[json.exception.parse_error.101] " tag.
    std::string msg = e.what();
    if (msg.rfind("[json.exception.", 0) == 0 && msg.find("] ") != std::string::npos)
      msg = msg.substr(msg.find("] ") + 2);
    for (char& c : msg)
      if (c == '\n') c = ' ';
    fail(name, "not valid JSON: " + msg);
  }
  return profiles_from_document(doc, name);
}

void save_profile_file(const std::filesystem::path& file,
                       const std::vector<DeviceProfile>& profiles) {
  fileio::write_file_atomically(file, profile_document(profiles).dump(2) + "\n");
}

std::optional<DeviceProfile> select_profile(const std::vector<DeviceProfile>& profiles,
                                            const std::string& key) {
  for (const auto& p : profiles)
    if (p.fingerprint == key) return p;
  const DeviceProfile* best = nullptr;
  // ISO 8601 UTC strings order chronologically as text.
  for (const auto& p : profiles)
    if (p.device_id == key && (!best || p.probed_at > best->probed_at)) best = &p;
  if (best) return *best;
  return std::nullopt;
}

}  // namespace ampx::capability
