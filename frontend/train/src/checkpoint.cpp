#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/train/checkpoint.hpp>

#include <zlib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <span>

namespace ampx::train {
namespace {

// safetensors' dtype names.
const char* st_dtype(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kF64:
      return "F64";
    case DType::kI64:
      return "I64";
    case DType::kI32:
      return "I32";
    default:
      throw std::invalid_argument("checkpoint: dtype " + std::string(dtype_name(t)) +
                                  " cannot be stored");
  }
}

std::optional<DType> from_st_dtype(const std::string& s) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI64, DType::kI32})
    if (s == st_dtype(t)) return t;
  return std::nullopt;
}

uint64_t fnv1a(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

const std::regex kFileName(R"(epoch-(\d{4,})\.ampxckpt)");

// The tensor's CRC-32 as 8 lowercase hex digits (metadata "crc32").
std::string crc32_hex(std::span<const std::byte> data) {
  uLong crc = ::crc32_z(0L, Z_NULL, 0);
  if (!data.empty()) crc = ::crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size());
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc & 0xffffffffUL));
  return buf;
}

// "holds NaN (element 3 of 120)" for the first non-finite element of a
// float tensor; nullopt when every element is finite (or it holds integers).
std::optional<std::string> nonfinite_problem(const HostTensor& t) {
  const auto bad = first_nonfinite(t);
  if (!bad) return std::nullopt;
  return std::string("holds ") + (bad->is_nan ? "NaN" : "infinity") + " (element " +
         std::to_string(bad->index) + " of " +
         std::to_string(t.data.size() / dtype_size(t.type.dtype)) + ")";
}

}  // namespace

std::string model_fingerprint(const Graph& g) {
  std::string text = g.name + "|";
  auto add = [&](ValueId v) {
    const Value& val = g.value(v);
    text +=
        val.name + ":" + std::string(dtype_name(val.type.dtype)) + shape_str(val.type.shape) + ";";
  };
  for (ValueId v : g.inputs()) add(v);
  text += "|";
  for (ValueId v : g.outputs()) add(v);
  text += "|";
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    if (g.value(v).is_constant()) add(v);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return buf;
}

void write_checkpoint(const std::filesystem::path& file, const Checkpoint& c) {
  // Weights or moments of NaN resume into NaN: refused before anything is
  // written, so the last good checkpoints stay the newest.
  for (const HostTensor& t : c.state)
    if (const auto problem = nonfinite_problem(t))
      throw std::runtime_error(fileio::printable_path(file) + ": tensor '" + t.name + "' " +
                               *problem +
                               ": the training diverged; the checkpoint was not written");
  nlohmann::ordered_json header;
  header["__metadata__"] = {
      {"format", kCheckpointFormat},
      {"epoch", std::to_string(c.epoch)},
      {"step", std::to_string(c.step)},
      {"seed", std::to_string(c.seed)},
      {"model", c.model},
      {"options", c.options},
      {"loss_scale",
       nlohmann::ordered_json{{"schedule", c.loss_scale_schedule},
                              {"scale", c.loss_scale.scale},
                              {"good_steps", c.loss_scale.good_steps},
                              {"last_overflow_step", c.loss_scale.last_overflow_step},
                              {"overflow_steps", c.loss_scale.overflow_steps},
                              {"steps", c.loss_scale.steps},
                              {"consecutive_overflows", c.loss_scale.consecutive_overflows}}
           .dump()}};
  if (!c.fallbacks.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const FallbackRecord& f : c.fallbacks)
      list.push_back(
          {{"layer", f.layer}, {"cause", f.cause}, {"step", f.step}, {"detail", f.detail}});
    header["__metadata__"]["amp_fallback"] = list.dump();
  }
  if (!c.fallback_windows.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const FallbackWindow& w : c.fallback_windows)
      list.push_back({{"layer", w.layer}, {"first", w.first}, {"underflow", w.underflow}});
    header["__metadata__"]["fallback_windows"] = list.dump();
  }
  // The tensors' order, stated: offsets alone cannot order an empty tensor
  // against another that starts where it does.
  nlohmann::ordered_json order = nlohmann::ordered_json::array();
  for (const HostTensor& t : c.state) order.push_back(t.name);
  header["__metadata__"]["order"] = order.dump();
  if (!c.shards.empty()) header["__metadata__"]["shards"] = nlohmann::json(c.shards).dump();
  // Every tensor's CRC-32: a flipped byte in the data is found on reading.
  nlohmann::ordered_json crcs = nlohmann::ordered_json::object();
  for (const HostTensor& t : c.state) crcs[t.name] = crc32_hex(t.data);
  header["__metadata__"]["crc32"] = crcs.dump();
  uint64_t offset = 0;
  for (const HostTensor& t : c.state) {
    if (header.contains(t.name))
      throw std::invalid_argument("checkpoint: tensor '" + t.name + "' twice");
    header[t.name] = {{"dtype", st_dtype(t.type.dtype)},
                      {"shape", t.type.shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // safetensors pads the header with spaces
  std::string out(8, '\0');
  const uint64_t n = h.size();
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += h;
  out.reserve(out.size() + offset);
  for (const HostTensor& t : c.state)
    if (!t.data.empty()) out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  fileio::write_file_atomically(file, out);
}

namespace {

// A metadata member that holds JSON as a string (safetensors' metadata
// values are strings); `what` names it in the error.
template <class Bad>
nlohmann::json parse_json_member(const nlohmann::json& text, const std::string& what,
                                 const Bad& bad) {
  try {
    if (!text.is_string()) throw bad(what + " is not a string");
    return nlohmann::json::parse(text.get<std::string>());
  } catch (const nlohmann::json::exception&) {
    throw bad(what + " is not JSON");
  }
}

// The "loss_scale" metadata string: a JSON object. Every member's type is
// checked before it is read (an integer read from a float is undefined).
template <class Bad>
void read_loss_scale(const nlohmann::json& text, Checkpoint& c, const Bad& bad) {
  const nlohmann::json j = parse_json_member(text, "the loss-scale state", bad);
  const auto integer = [&](const char* key) -> int64_t {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer())
      throw bad(std::string("the loss-scale state has no integer '") + key + "'");
    return j[key].get<int64_t>();
  };
  if (!j.is_object() || !j.contains("schedule") || !j["schedule"].is_string())
    throw bad("the loss-scale state has no schedule");
  if (!j.contains("scale") || !j["scale"].is_number())
    throw bad("the loss-scale state has no scale");
  c.loss_scale_schedule = j["schedule"].get<std::string>();
  c.loss_scale.scale = j["scale"].get<double>();
  if (!(c.loss_scale.scale > 0) || !std::isfinite(c.loss_scale.scale))
    throw bad("the loss scale is not a positive number");
  c.loss_scale.good_steps = integer("good_steps");
  c.loss_scale.last_overflow_step = integer("last_overflow_step");
  c.loss_scale.overflow_steps = integer("overflow_steps");
  c.loss_scale.steps = integer("steps");
  c.loss_scale.consecutive_overflows = integer("consecutive_overflows");
}

// The "amp_fallback" metadata string: a JSON array of layers, each
// member's type checked.
template <class Bad>
void read_fallbacks(const nlohmann::json& text, Checkpoint& c, const Bad& bad) {
  const nlohmann::json j = parse_json_member(text, "the fallback list", bad);
  if (!j.is_array()) throw bad("the fallback list is not a list");
  for (const auto& e : j) {
    const auto text_of = [&](const char* key) {
      if (!e.is_object() || !e.contains(key) || !e[key].is_string())
        throw bad(std::string("a fallback layer has no text '") + key + "'");
      return e[key].get<std::string>();
    };
    FallbackRecord f;
    f.layer = text_of("layer");
    f.cause = text_of("cause");
    f.detail = text_of("detail");
    if (!e.contains("step") || !e["step"].is_number_integer())
      throw bad("a fallback layer has no integer 'step'");
    f.step = e["step"].get<int64_t>();
    if (f.layer.empty()) throw bad("a fallback layer has an empty name");
    c.fallbacks.push_back(std::move(f));
  }
}

// The "fallback_windows" metadata string: a JSON array, each member's type
// checked (integers as integers: a float read as one is undefined).
template <class Bad>
void read_fallback_windows(const nlohmann::json& text, Checkpoint& c, const Bad& bad) {
  const nlohmann::json j = parse_json_member(text, "the fallback windows", bad);
  if (!j.is_array()) throw bad("the fallback windows are not a list");
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("layer") || !e["layer"].is_string() || !e.contains("first") ||
        !e["first"].is_array() || !e.contains("underflow") || !e["underflow"].is_array())
      throw bad("a fallback window is malformed");
    FallbackWindow w;
    w.layer = e["layer"].get<std::string>();
    for (const auto& s : e["first"]) {
      if (!s.is_number_integer()) throw bad("a fallback window's step is not an integer");
      w.first.push_back(s.get<int64_t>());
    }
    for (const auto& u : e["underflow"]) {
      if (!u.is_number()) throw bad("a fallback window's underflow share is not a number");
      w.underflow.push_back(u.get<double>());
    }
    c.fallback_windows.push_back(std::move(w));
  }
}

}  // namespace

// One file: a whole checkpoint, a manifest (its shards not read), or a shard.
Checkpoint read_checkpoint_file(const std::filesystem::path& file) {
  const std::string bytes = fileio::read_regular_file(file);
  auto bad = [&](const std::string& what) -> std::runtime_error {
    return std::runtime_error(file.string() + ": " + what);
  };
  if (bytes.size() < 8) throw bad("truncated (no header)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  if (n > bytes.size() - 8)
    throw bad("truncated (the header says " + std::to_string(n) + " bytes)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const nlohmann::json::exception&) {
    throw bad("not a checkpoint (the header is not JSON)");
  }
  // Each member's type checked before it is read: nlohmann's value() throws
  // its own type_error for a "format" that is not a string (a fuzz finding).
  const auto has_format = [&] {
    if (!header.is_object() || !header.contains("__metadata__")) return false;
    const auto& m = header["__metadata__"];
    if (!m.is_object() || !m.contains("format") || !m["format"].is_string()) return false;
    return m["format"].get<std::string>() == kCheckpointFormat;
  };
  if (!has_format()) {
    const bool version1 =
        header.is_object() && header.contains("__metadata__") &&
        header["__metadata__"].is_object() &&
        header["__metadata__"].value("format", nlohmann::json()) == "ampx.checkpoint/1";
    if (version1)
      throw bad(
          "written by an older ampx (format ampx.checkpoint/1, without tensor checksums): it "
          "cannot be verified; train again without --resume");
    throw bad(std::string("not an ampx checkpoint (expected format ") + kCheckpointFormat + ")");
  }
  const auto& meta = header["__metadata__"];
  Checkpoint c;
  try {
    c.epoch = std::stoi(meta.at("epoch").get<std::string>());
    c.step = std::stoll(meta.at("step").get<std::string>());
    c.seed = std::stoull(meta.at("seed").get<std::string>());
    c.model = meta.at("model").get<std::string>();
    c.options = meta.at("options").get<std::string>();
  } catch (const std::exception&) {
    throw bad("the metadata is incomplete or malformed");
  }
  if (meta.contains("loss_scale")) read_loss_scale(meta["loss_scale"], c, bad);
  if (meta.contains("amp_fallback")) read_fallbacks(meta["amp_fallback"], c, bad);
  if (meta.contains("fallback_windows")) read_fallback_windows(meta["fallback_windows"], c, bad);
  if (meta.contains("shards")) {
    const nlohmann::json shards = parse_json_member(meta["shards"], "the shard list", bad);
    const std::regex shard_name(R"(epoch-\d{4,}\.shard-\d+-of-\d+\.ampxckpt)");
    if (!shards.is_array()) throw bad("the shard list is not a JSON array");
    for (const auto& name : shards) {
      // Plain names in the manifest's directory: never a path elsewhere.
      if (!name.is_string() || !std::regex_match(name.get<std::string>(), shard_name))
        throw bad("the shard list names something that is not a shard file");
      c.shards.push_back(name.get<std::string>());
    }
  }
  const uint64_t data_start = 8 + n, data_bytes = bytes.size() - data_start;
  if (!meta.contains("crc32")) throw bad("the tensor checksums (metadata crc32) are missing");
  const nlohmann::json crcs = parse_json_member(meta["crc32"], "the tensor checksums", bad);
  if (!crcs.is_object()) throw bad("the tensor checksums are not a JSON object");
  // Tensors in file order (by offset), as written.
  std::vector<std::pair<uint64_t, HostTensor>> tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    try {
      const auto dtype = from_st_dtype(entry.at("dtype").get<std::string>());
      if (!dtype) throw bad("tensor '" + name + "' has an unknown dtype");
      // Integers only: nlohmann's get<> converts a float such as 8e57 to an
      // integer type without a range check (undefined behaviour).
      const auto& js = entry.at("shape");
      const auto& jo = entry.at("data_offsets");
      if (!js.is_array() || !jo.is_array())
        throw bad("tensor '" + name + "' has a malformed entry");
      Shape shape;
      for (const auto& d : js) {
        if (!d.is_number_integer()) throw bad("tensor '" + name + "' has an invalid shape");
        shape.push_back(d.get<int64_t>());
      }
      std::vector<uint64_t> offs;
      for (const auto& o : jo) {
        if (!o.is_number_unsigned()) throw bad("tensor '" + name + "' has invalid data_offsets");
        offs.push_back(o.get<uint64_t>());
      }
      uint64_t count = 1;
      for (int64_t d : shape) {
        if (d < 0 || (d > 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(d)))
          throw bad("tensor '" + name + "' has an invalid shape");
        count *= static_cast<uint64_t>(d);
      }
      if (offs.size() != 2 || offs[0] > offs[1] || offs[1] > data_bytes ||
          offs[1] - offs[0] != count * dtype_size(*dtype))
        throw bad("tensor '" + name +
                  "': its data lies outside the file or has the wrong size (truncated?)");
      HostTensor t{name, {*dtype, shape}, std::vector<std::byte>(offs[1] - offs[0])};
      if (!t.data.empty())  // an empty tensor has no buffer to copy to
        std::memcpy(t.data.data(), bytes.data() + data_start + offs[0], t.data.size());
      if (!crcs.contains(name) || !crcs[name].is_string())
        throw bad("tensor '" + name + "' has no checksum");
      if (crcs[name].get<std::string>() != crc32_hex(t.data))
        throw bad("tensor '" + name +
                  "': its data does not match its checksum (the file is corrupt)");
      if (const auto problem = nonfinite_problem(t))
        throw bad("tensor '" + name + "' " + *problem +
                  ": the run that wrote it had diverged; resume from an earlier checkpoint");
      tensors.emplace_back(offs[0], std::move(t));
    } catch (const std::runtime_error&) {
      throw;
    } catch (const std::exception&) {
      throw bad("tensor '" + name + "' has a malformed entry");
    }
  }
  if (crcs.size() != tensors.size())
    throw bad("the tensor checksums name a tensor the file does not hold");
  if (meta.contains("order")) {
    // The writer's order: every tensor named once.
    const nlohmann::json order = parse_json_member(meta["order"], "the tensor order", bad);
    const auto refuse = [&] { return bad("the tensor order does not name every tensor once"); };
    if (!order.is_array() || order.size() != tensors.size()) throw refuse();
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < tensors.size(); ++i) at.emplace(tensors[i].second.name, i);
    std::vector<bool> used(tensors.size(), false);
    for (const auto& n : order) {
      if (!n.is_string()) throw refuse();
      const auto it = at.find(n.get<std::string>());
      if (it == at.end() || used[it->second]) throw refuse();
      used[it->second] = true;
      c.state.push_back(std::move(tensors[it->second].second));
    }
    return c;
  }
  // Without it (safetensors from elsewhere): file order, by offset.
  std::stable_sort(tensors.begin(), tensors.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [off, t] : tensors) c.state.push_back(std::move(t));
  return c;
}

std::string shard_file_name(int epoch, int rank, int ranks) {
  char name[96];
  std::snprintf(name, sizeof name, "epoch-%04d.shard-%d-of-%d.ampxckpt", epoch, rank, ranks);
  return name;
}

Checkpoint read_checkpoint(const std::filesystem::path& file) {
  Checkpoint c = read_checkpoint_file(file);
  std::set<std::string> names;
  for (const HostTensor& t : c.state) names.insert(t.name);
  for (const std::string& shard_name : c.shards) {
    const std::filesystem::path shard_path = file.parent_path() / shard_name;
    Checkpoint shard = read_checkpoint_file(shard_path);
    const auto bad = [&](const std::string& what) {
      return std::runtime_error(fileio::printable_path(shard_path) + ": " + what);
    };
    if (!shard.shards.empty()) throw bad("a shard names shards of its own");
    if (shard.model != c.model || shard.options != c.options || shard.seed != c.seed ||
        shard.epoch != c.epoch || shard.step != c.step)
      throw bad("the shard is of another run or step than its manifest '" +
                fileio::printable_path(file.filename()) + "' (epoch " +
                std::to_string(shard.epoch) + ", step " + std::to_string(shard.step) + ")");
    for (HostTensor& t : shard.state) {
      if (!names.insert(t.name).second) throw bad("tensor '" + t.name + "' is in two files");
      c.state.push_back(std::move(t));
    }
  }
  return c;
}

void make_checkpoint_dir(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (fs::is_symlink(fs::symlink_status(dir, ec)) && !fs::exists(dir, ec))
    throw fileio::FileError(dir, "a symbolic link to '" +
                                     fileio::printable_path(fs::read_symlink(dir, ec)) +
                                     "', which does not exist");
  if (fs::exists(dir, ec)) throw fileio::FileError(dir, "not a directory");
  // std::filesystem's own message names the library's internals
  // ("filesystem error: cannot create directories: ...").
  if (!fs::create_directories(dir, ec) && ec)
    throw fileio::FileError(dir, "cannot create the checkpoint directory (" + ec.message() + ")");
}

std::filesystem::path save_checkpoint(const std::filesystem::path& dir, const Checkpoint& c,
                                      int keep) {
  make_checkpoint_dir(dir);
  char name[64];
  std::snprintf(name, sizeof name, "epoch-%04d.ampxckpt", c.epoch);
  const std::filesystem::path file = dir / name;
  write_checkpoint(file, c);
  std::vector<std::filesystem::path> all;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (std::regex_match(e.path().filename().string(), kFileName)) all.push_back(e.path());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i + static_cast<size_t>(std::max(keep, 1)) < all.size(); ++i) {
    // A sharded checkpoint's shards go with its manifest.
    const std::string stem = all[i].filename().string();
    const std::regex its_shards(std::regex_replace(stem, std::regex(R"(\.ampxckpt$)"), "") +
                                R"(\.shard-\d+-of-\d+\.ampxckpt)");
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (std::regex_match(e.path().filename().string(), its_shards))
        std::filesystem::remove(e.path());
    std::filesystem::remove(all[i]);
  }
  return file;
}

std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
  std::optional<std::filesystem::path> best;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (std::regex_match(e.path().filename().string(), kFileName) && (!best || e.path() > *best))
      best = e.path();
  return best;
}

}  // namespace ampx::train
