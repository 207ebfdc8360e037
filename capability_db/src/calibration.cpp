#include <ampx/capability/calibration.hpp>
#include <ampx/plugin_support.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace ampx::capability {

namespace {

void append_tensors(std::string& s, const ampx_tensor_desc* t, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += plugin_support::dtype_name(t[i].dtype);
    s += '[';
    for (int32_t d = 0; d < t[i].rank; ++d) {
      if (d) s += ',';
      s += std::to_string(t[i].dims[d]);
    }
    s += ']';
  }
}

std::string attr_text(const ampx_attr& a) {
  switch (a.kind) {
    case AMPX_ATTR_INT:
      return std::to_string(a.i);
    case AMPX_ATTR_FLOAT:
      return fmt::format("{}", a.f);  // shortest round-trip form
    case AMPX_ATTR_INTS:
      return fmt::format("[{}]", fmt::join(a.ints, a.ints + a.count, ","));
    case AMPX_ATTR_FLOATS:
      return fmt::format("[{}]", fmt::join(a.floats, a.floats + a.count, ","));
    case AMPX_ATTR_STRING:
      return a.s ? a.s : "";
  }
  return "?";
}

// Half the interquartile range: robust to the one slow run a noisy machine
// has now and then.
std::pair<double, double> median_and_spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
  };
  return {at(0.5), 0.5 * (at(0.75) - at(0.25))};
}

}  // namespace

std::string node_signature(const ampx_node_desc& node) {
  std::string s = kSignatureVersion;
  s += '|';
  s += node.op_type ? node.op_type : "";
  s += '|';
  append_tensors(s, node.inputs, node.num_inputs);
  s += '|';
  append_tensors(s, node.outputs, node.num_outputs);
  s += '|';
  std::vector<std::pair<std::string, std::string>> attrs;
  for (size_t i = 0; i < node.num_attrs; ++i)
    attrs.emplace_back(node.attrs[i].name ? node.attrs[i].name : "", attr_text(node.attrs[i]));
  std::sort(attrs.begin(), attrs.end());
  for (size_t i = 0; i < attrs.size(); ++i)
    s += (i ? ";" : "") + attrs[i].first + "=" + attrs[i].second;
  return s;
}

std::string invalid_reason(const NodeTiming& t) {
  const std::string prefix = std::string(kSignatureVersion) + "|";
  if (t.signature.rfind(prefix, 0) != 0) return "signature of another version";
  if (t.samples < 1) return "no samples";
  if (!std::isfinite(t.median_us) || (t.median_us < 0 && t.op != "Run"))
    return "time is not a finite number >= 0";
  if (!std::isfinite(t.spread_us) || t.spread_us < 0) return "spread is not a finite number >= 0";
  return {};
}

Calibration::Calibration(std::vector<NodeTiming> rows, const std::string& device_id) {
  int dropped = 0;
  std::string why;
  for (NodeTiming& t : rows) {
    const std::string r = invalid_reason(t);
    if (!r.empty()) {
      if (dropped++ == 0) why = r + " ('" + t.signature + "')";
      continue;
    }
    std::string key = t.signature;
    rows_.insert_or_assign(std::move(key), std::move(t));
  }
  if (dropped > 0)
    spdlog::warn("calibration of {}: dropped {} stale or corrupt row{}, first: {}",
                 device_id.empty() ? "a device" : device_id, dropped, dropped == 1 ? "" : "s", why);
}

void Calibration::record(const ampx_node_desc& node, std::span<const double> samples_us,
                         const std::string& measured_at) {
  if (samples_us.empty()) return;
  NodeTiming t;
  t.signature = node_signature(node);
  t.op = node.op_type ? node.op_type : "";
  t.dtype = node.num_outputs ? plugin_support::dtype_name(node.outputs[0].dtype) : "?";
  t.samples = static_cast<int>(samples_us.size());
  std::tie(t.median_us, t.spread_us) =
      median_and_spread(std::vector<double>(samples_us.begin(), samples_us.end()));
  t.measured_at = measured_at;
  put(std::move(t));
}

void Calibration::record_run_overhead(const ampx_node_desc& run, std::span<const double> samples_us,
                                      const std::string& measured_at) {
  record(run, samples_us, measured_at);
}

void Calibration::put(NodeTiming t) {
  std::string key = t.signature;
  rows_.insert_or_assign(std::move(key), std::move(t));
}

const NodeTiming* Calibration::find(const std::string& signature) const {
  const auto it = rows_.find(signature);
  return it == rows_.end() ? nullptr : &it->second;
}

std::vector<NodeTiming> Calibration::rows() const {
  std::vector<NodeTiming> out;
  out.reserve(rows_.size());
  for (const auto& [key, t] : rows_) out.push_back(t);
  return out;
}

CalibratedCostModel::CalibratedCostModel(Calibration calibration, std::shared_ptr<CostModel> inner)
    : calibration_(std::move(calibration)), inner_(std::move(inner)) {}

CostEstimate CalibratedCostModel::estimate(const ampx_node_desc& node) {
  if (calibration_.size() > 0) {
    signature_ = node_signature(node);
    if (const NodeTiming* t = calibration_.find(signature_))
      return {t->median_us, CostOrigin::kMeasured};
  }
  return inner_ ? inner_->estimate(node) : CostEstimate{};
}

std::optional<double> CalibratedCostModel::run_overhead_us(const ampx_node_desc& run) {
  const NodeTiming* t = calibration_.find(node_signature(run));
  return t ? std::optional<double>(t->median_us) : std::nullopt;
}

std::string CalibratedCostModel::source() const {
  const std::string inner = inner_ ? inner_->source() : "nothing else";
  if (calibration_.size() == 0) return inner;
  return fmt::format("in-context measurements ({} node signatures), then {}", calibration_.size(),
                     inner);
}

}  // namespace ampx::capability
