#include <ampx/capability/store.hpp>
#include <ampx/tune/tuned_plan_key.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unordered_set>

namespace ampx {

namespace {

class Fnv1a {
 public:
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h_ = (h_ ^ b[i]) * 0x100000001b3ULL;
  }
  void text(std::string_view s) {
    const uint64_t n = s.size();
    bytes(&n, sizeof n);
    bytes(s.data(), s.size());
  }
  template <class T>
  void pod(const T& v) {
    bytes(&v, sizeof v);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

void hash_type(Fnv1a& h, const TensorType& t) {
  h.pod(static_cast<int>(t.dtype));
  h.pod(t.shape.size());
  for (int64_t d : t.shape) h.pod(d);
}

void hash_attr(Fnv1a& h, const Attribute& a) {
  h.pod(a.index());
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          h.text(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<double>>) {
          h.pod(v.size());
          h.bytes(v.data(), v.size() * sizeof(v[0]));
        } else {
          h.pod(v);
        }
      },
      a);
}

std::string joined_names(const std::vector<OpType>& ops) {
  std::vector<std::string_view> names;
  for (OpType op : ops) names.push_back(op_name(op));
  return fmt::format("{}", fmt::join(names, ","));
}

}  // namespace

std::string graph_content_hash(const Graph& g) {
  Fnv1a h;
  h.pod(g.num_values());
  for (const Value& v : g.values()) {
    h.text(v.name);
    hash_type(h, v.type);
    h.pod(v.producer);
    h.pod(v.is_constant());
    if (v.is_constant()) {
      h.pod(v.constant->size());
      h.bytes(v.constant->data(), v.constant->size());
    }
  }
  h.pod(g.num_nodes());
  for (const Node& n : g.nodes()) {
    h.text(n.name);
    h.pod(static_cast<int>(n.op));
    h.pod(n.inputs.size());
    for (ValueId v : n.inputs) h.pod(v);
    h.pod(n.outputs.size());
    for (ValueId v : n.outputs) h.pod(v);
    h.pod(n.attrs.size());
    for (const auto& [name, a] : n.attrs) {
      h.text(name);
      hash_attr(h, a);
    }
  }
  for (ValueId v : g.inputs()) h.pod(v);
  for (ValueId v : g.outputs()) h.pod(v);
  return fmt::format("{:016x}", h.value());
}

TunedPlanKey tuned_plan_key(const Graph& graph, const AmpPolicy& policy,
                            const DeviceSelection& selection, std::span<const DevicePin> pins) {
  TunedPlanKey k = tuned_plan_lookup_key(policy, selection, pins);
  k.model_hash = graph_content_hash(graph);
  return k;
}

TunedPlanKey tuned_plan_lookup_key(const AmpPolicy& policy, const DeviceSelection& selection,
                                   std::span<const DevicePin> pins) {
  TunedPlanKey k;
  std::string ids;
  // fmt, not operator+: GCC 12 warns falsely (-Wrestrict) on "lit" + string.
  auto add = [](std::string& list, const std::string& item) {
    list = list.empty() ? item : fmt::format("{},{}", list, item);
  };
  for (const SelectedDevice& d : selection.devices) {
    add(k.devices, d.device->props().fingerprint);
    add(ids, fmt::format("{}{}", d.device->id(), d.fallback_only ? "(fallback)" : ""));
  }
  std::string overrides, place;
  for (const NodeOverride& o : policy.overrides)
    add(overrides, fmt::format("{}:{}", o.pattern, o.force_16bit ? "16" : "f32"));
  for (const DevicePin& p : pins) add(place, fmt::format("{}={}", p.pattern, p.device));
  k.options = fmt::format("amp={};dtype={};white={};black={};overrides={};place={};devices={}",
                          amp_level_name(policy.level), dtype_name(policy.half),
                          policy.white_list ? joined_names(*policy.white_list) : "default",
                          policy.black_list ? joined_names(*policy.black_list) : "default",
                          overrides, place, ids);
  return k;
}

std::optional<StoredTuning> find_tuned_plan(const Graph& graph, const std::string& model_name,
                                            const TunedPlanKey& key,
                                            const std::optional<std::string>& db_path) {
  std::optional<capability::TunedPlanRecord> rec;
  try {
    const auto store = capability::Store::open_read_only(capability::resolve_db_path(db_path));
    if (!store) return std::nullopt;
    std::string model_hash = key.model_hash;
    std::optional<std::vector<capability::TunedPlanRecord>> named;
    if (model_hash.empty()) {
      // No plan for these devices and options nor for this model: nothing
      // to find and nothing to explain, so no hash.
      named = store->tuned_plans_named(model_name);
      if (named->empty() && !store->has_tuned_plan_for(key.devices, key.options))
        return std::nullopt;
      model_hash = graph_content_hash(graph);
    }
    rec = store->tuned_plan(model_hash, key.devices, key.options);
    if (!rec) {
      if (!named) named = store->tuned_plans_named(model_name);
      for (const auto& other : *named) {
        const char* what = other.model_hash != model_hash ? "the model changed"
                           : other.devices != key.devices ? "the devices or plugins changed"
                                                          : "the plan options differ";
        spdlog::info("tuned plan of {} from {} not used: {} (tune again to replace it)", model_name,
                     other.tuned_at, what);
      }
      return std::nullopt;
    }
  } catch (const std::exception& e) {
    spdlog::warn("no tuned plan read ({})", e.what());
    return std::nullopt;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(rec->plan_json);
    if (j.at("schema").get<std::string>() != "ampx.tuned/1")
      throw std::runtime_error("schema '" + j.at("schema").get<std::string>() + "'");
    StoredTuning t;
    t.kept = j.at("kept").get<std::string>();
    t.f32_nodes = j.at("f32_nodes").get<std::vector<std::string>>();
    t.noise = j.value("noise", -1.0);
    for (const auto& v : j.value("verified", nlohmann::json::array()))
      if (v.value("plan", "") == t.kept) t.ratio_to_o0 = v.value("ratio_to_o0", -1.0);
    std::unordered_set<std::string_view> names;
    for (const Node& n : graph.nodes()) names.insert(n.name);
    for (const std::string& n : t.f32_nodes)
      if (!names.contains(n)) throw std::runtime_error("no node '" + n + "' in the model");
    t.note = fmt::format("tuned plan of {} (kept: {}, {} node{} f32 by measurement)", rec->tuned_at,
                         t.kept, t.f32_nodes.size(), t.f32_nodes.size() == 1 ? "" : "s");
    return t;
  } catch (const std::exception& e) {
    spdlog::warn("tuned plan of {} from {} ignored: {}", model_name, rec->tuned_at, e.what());
    return std::nullopt;
  }
}

}  // namespace ampx
