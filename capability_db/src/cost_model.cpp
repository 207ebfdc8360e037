#include <ampx/capability/cost_model.hpp>
#include <ampx/opset/work.hpp>
#include <ampx/plugin_support.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

namespace ampx::capability {

const char* cost_origin_name(CostOrigin o) {
  switch (o) {
    case CostOrigin::kMeasured:
      return "measured";
    case CostOrigin::kProbe:
      return "probe";
    case CostOrigin::kHint:
      return "hint";
    case CostOrigin::kNone:
      break;
  }
  return "none";
}

namespace {

class HintCostModel final : public CostModel {
 public:
  explicit HintCostModel(CapabilitySource& device) : device_(device) {}
  double node_us(const ampx_node_desc& node) override { return device_.query(node).cost_us; }
  std::string source() const override {
    return "plugin cost hints (no probe data for " + device_.device_id() + ")";
  }
  bool measured() const override { return false; }

 private:
  CapabilitySource& device_;
};

// The dtype a node computes in: its first float tensor's.
std::string compute_dtype(const ampx_node_desc& node) {
  auto pick = [](const ampx_tensor_desc* t, size_t n) -> const char* {
    for (size_t i = 0; i < n; ++i)
      if (plugin_support::is_float_dtype(t[i].dtype)) return plugin_support::dtype_name(t[i].dtype);
    return nullptr;
  };
  if (const char* d = pick(node.outputs, node.num_outputs)) return d;
  if (const char* d = pick(node.inputs, node.num_inputs)) return d;
  return node.num_outputs ? plugin_support::dtype_name(node.outputs[0].dtype) : "?";
}

double work_of(const opset::WorkEstimate& w) {
  return w.flops > 0 ? w.flops : w.bytes;
}

class ProfileCostModel final : public CostModel {
 public:
  ProfileCostModel(DeviceProfile profile, std::unique_ptr<CostModel> fallback)
      : profile_(std::move(profile)), fallback_(std::move(fallback)) {
    for (const OpTiming& t : profile_.ops) {
      if (t.time_us <= 0 || t.support == AMPX_SUPPORT_UNSUPPORTED) continue;
      const double w = t.flops > 0 ? t.flops : t.bytes;
      if (w <= 0) continue;
      points_[{t.op, t.dtype}].emplace_back(w, t.time_us);
    }
    for (auto& [key, pts] : points_) std::sort(pts.begin(), pts.end());
    for (const CastCost& c : profile_.casts) casts_[{c.from, c.to}] = c.ns_per_element;
  }

  double node_us(const ampx_node_desc& node) override { return estimate(node).us; }

  CostEstimate estimate(const ampx_node_desc& node) override {
    const std::string op = node.op_type ? node.op_type : "";
    if (op == "Cast" && node.num_inputs == 1 && node.num_outputs == 1) {
      const auto it = casts_.find({plugin_support::dtype_name(node.inputs[0].dtype),
                                   plugin_support::dtype_name(node.outputs[0].dtype)});
      if (it != casts_.end()) {
        const double elems = static_cast<double>(plugin_support::element_count(node.outputs[0]));
        return {elems * it->second * 1e-3, CostOrigin::kProbe};
      }
    }
    const auto it = points_.find({op, compute_dtype(node)});
    if (it == points_.end() || it->second.empty())
      return fallback_ ? fallback_->estimate(node) : CostEstimate{};
    return {interpolate(it->second, work_of(opset::estimate_work(node))), CostOrigin::kProbe};
  }

  std::string source() const override {
    return "probe data (" + profile_.fingerprint + ", " + profile_.probed_at + ")";
  }
  bool measured() const override { return true; }

  double copy_us(uint64_t bytes, bool to_device) override {
    for (const CopyCost& c : profile_.copies)
      if (c.direction == (to_device ? "h2d" : "d2h"))
        return c.latency_us + static_cast<double>(bytes) * c.ns_per_byte * 1e-3;
    return fallback_ ? fallback_->copy_us(bytes, to_device) : -1.0;
  }

 private:
  // Piecewise linear in log(work)-log(time) between probed points; outside
  // the probed range, the nearest segment's slope, clamped to [0.3, 1.2]
  // (small kernels are latency-bound, so time falls slower than work).
  static double interpolate(const std::vector<std::pair<double, double>>& pts, double w) {
    if (w <= 0) return pts.front().second;
    auto slope = [&](size_t i) {
      const double s = (std::log(pts[i + 1].second) - std::log(pts[i].second)) /
                       (std::log(pts[i + 1].first) - std::log(pts[i].first));
      return std::clamp(std::isfinite(s) ? s : 1.0, 0.3, 1.2);
    };
    auto along = [&](size_t i, double s) { return pts[i].second * std::pow(w / pts[i].first, s); };
    if (pts.size() == 1) return along(0, 1.0);
    if (w <= pts.front().first) return along(0, slope(0));
    if (w >= pts.back().first) return along(pts.size() - 1, slope(pts.size() - 2));
    size_t i = 0;
    while (i + 2 < pts.size() && pts[i + 1].first < w) ++i;
    const double t = (std::log(w) - std::log(pts[i].first)) /
                     (std::log(pts[i + 1].first) - std::log(pts[i].first));
    return std::exp(std::log(pts[i].second) +
                    t * (std::log(pts[i + 1].second) - std::log(pts[i].second)));
  }

  DeviceProfile profile_;
  std::unique_ptr<CostModel> fallback_;
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> points_;
  std::map<std::pair<std::string, std::string>, double> casts_;
};

}  // namespace

std::unique_ptr<CostModel> make_hint_cost_model(CapabilitySource& device) {
  return std::make_unique<HintCostModel>(device);
}

std::unique_ptr<CostModel> make_profile_cost_model(DeviceProfile profile,
                                                   std::unique_ptr<CostModel> fallback) {
  return std::make_unique<ProfileCostModel>(std::move(profile), std::move(fallback));
}

}  // namespace ampx::capability
