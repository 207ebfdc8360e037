#include <ampx/train/overflow_diagnostics.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

namespace ampx::train {

void OverflowOptions::validate() const {
  if (fallback_overflows < 0)
    throw std::invalid_argument("the fallback's overflow count must be >= 0");
  if (fallback_window < 1) throw std::invalid_argument("the fallback window must be >= 1 step");
  if (!(fallback_underflow >= 0 && fallback_underflow <= 1))
    throw std::invalid_argument("the fallback's underflow share must be in [0, 1] (0: off)");
}

double dtype_max_finite(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 65504.0;
    case DType::kBF16:
      return 3.3895313892515355e38;
    case DType::kF64:
      return std::numeric_limits<double>::max();
    default:
      return std::numeric_limits<float>::max();
  }
}

double dtype_min_normal(DType dtype) {
  return dtype == DType::kF16 ? 0x1p-14 : 0x1p-126;
}

namespace {

DType layer_dtype(const AmpPlan& plan, const std::string& layer) {
  for (const NodePlan& n : plan.nodes)
    if (n.name == layer) return n.is_float_node ? n.effective : DType::kF32;
  return DType::kF32;
}

}  // namespace

OverflowDiagnostics::OverflowDiagnostics(const TrainingGraph& tg, const AmpPlan& plan, DType half,
                                         std::vector<std::string> model_nodes)
    : half_(half) {
  std::map<std::string, size_t, std::less<>> index;
  std::sort(model_nodes.begin(), model_nodes.end());
  for (const OverflowProbe& p : tg.probes) {
    auto [it, added] = index.emplace(p.layer, layers_.size());
    if (added) {
      Layer l;
      l.s.layer = p.layer;
      for (const Node& n : tg.step.nodes())
        if (n.name == p.layer) l.s.op = std::string(op_name(n.op));
      l.model_node = std::binary_search(model_nodes.begin(), model_nodes.end(), p.layer);
      layers_.push_back(std::move(l));
    }
    probes_.push_back({it->second, p.kind, p.tensor, p.elements});
  }
  replan(tg, plan);
}

void OverflowDiagnostics::replan(const TrainingGraph&, const AmpPlan& plan) {
  for (Layer& l : layers_) l.s.dtype = layer_dtype(plan, l.s.layer);
}

std::optional<OverflowEvent> OverflowDiagnostics::record(int64_t step, std::span<const float> stats,
                                                         bool scale_can_back_off) {
  if (stats.size() != 3 * probes_.size())
    throw std::runtime_error("the overflow probe returned " + std::to_string(stats.size()) +
                             " values for " + std::to_string(probes_.size()) + " tensors");
  std::optional<OverflowEvent> event;
  bool any_nonfinite = false;
  std::vector<char> nonfinite(layers_.size(), 0);
  std::vector<double> under(layers_.size(), 0), under_elems(layers_.size(), 0);
  for (size_t i = 0; i < probes_.size(); ++i) {
    const Probe& p = probes_[i];
    Layer& l = layers_[p.layer];
    const double amax = stats[3 * i], bad = stats[3 * i + 1], small = stats[3 * i + 2];
    double& seen =
        p.kind == OverflowProbe::Kind::kActivation ? l.s.activation_amax : l.s.gradient_amax;
    seen = std::max(seen, amax);
    if (bad > 0) {
      any_nonfinite = true;
      nonfinite[p.layer] = 1;
      if (!event) {
        event = OverflowEvent{step,   l.s.layer, l.s.op,
                              p.kind, p.tensor,  bad,
                              amax,   l.s.dtype, dtype_max_finite(l.s.dtype)};
      }
    }
    if (p.kind == OverflowProbe::Kind::kGradient) {
      under[p.layer] += small * static_cast<double>(p.elements);
      under_elems[p.layer] += static_cast<double>(p.elements);
    }
  }
  for (size_t k = 0; k < layers_.size(); ++k) {
    Layer& l = layers_[k];
    l.s.nonfinite_steps += nonfinite[k];
    // An overflowed step's gradients are not the run's: their underflow
    // is left out.
    if (!any_nonfinite && under_elems[k] > 0) {
      const double share = under[k] / under_elems[k];
      l.underflow_sum += share;
      ++l.s.steps;
      l.s.underflow_share = l.underflow_sum / static_cast<double>(l.s.steps);
      l.recent_underflow.push_back(share);
      while (window_ > 0 && static_cast<int64_t>(l.recent_underflow.size()) > window_)
        l.recent_underflow.pop_front();
    }
  }
  if (event) {
    event->counts = event->kind == OverflowProbe::Kind::kActivation || !scale_can_back_off;
    for (Layer& l : layers_)
      if (l.s.layer == event->layer) {
        ++l.s.first_overflows;
        if (event->counts) {
          ++l.s.counted_overflows;
          l.recent_first.push_back(step);
        }
      }
    events_.push_back(*event);
  }
  return event;
}

std::vector<FallbackRecord> OverflowDiagnostics::due_for_fallback(const OverflowOptions& o,
                                                                  int64_t step) {
  window_ = std::max(window_, o.fallback_window);
  std::vector<FallbackRecord> due;
  for (Layer& l : layers_) {
    while (!l.recent_first.empty() && l.recent_first.front() <= step - o.fallback_window)
      l.recent_first.pop_front();
    while (static_cast<int64_t>(l.recent_underflow.size()) > o.fallback_window)
      l.recent_underflow.pop_front();
    if (l.s.fallback || !l.model_node || !is_16bit_float(l.s.dtype)) continue;
    char detail[160];
    if (static_cast<int64_t>(l.recent_first.size()) > o.fallback_overflows) {
      std::snprintf(detail, sizeof detail, "named first at %zu overflowed steps in the last %lld",
                    l.recent_first.size(), static_cast<long long>(o.fallback_window));
      due.push_back({l.s.layer, "overflow", step, detail});
      continue;
    }
    if (o.fallback_underflow > 0 &&
        static_cast<int64_t>(l.recent_underflow.size()) >= o.fallback_window) {
      double sum = 0;
      for (double s : l.recent_underflow) sum += s;
      const double mean = sum / static_cast<double>(l.recent_underflow.size());
      if (mean > o.fallback_underflow) {
        std::snprintf(detail, sizeof detail,
                      "%.1f %% of its gradients below %s's normal range over the last %lld steps",
                      100.0 * mean, std::string(dtype_name(l.s.dtype)).c_str(),
                      static_cast<long long>(o.fallback_window));
        due.push_back({l.s.layer, "underflow", step, detail});
      }
    }
  }
  return due;
}

void OverflowDiagnostics::mark_fallback(const std::string& layer) {
  for (Layer& l : layers_)
    if (l.s.layer == layer) {
      l.s.fallback = true;
      l.recent_first.clear();
      l.recent_underflow.clear();
    }
}

std::vector<FallbackWindow> OverflowDiagnostics::windows() const {
  std::vector<FallbackWindow> out;
  for (const Layer& l : layers_)
    if (!l.recent_first.empty() || !l.recent_underflow.empty())
      out.push_back({l.s.layer,
                     {l.recent_first.begin(), l.recent_first.end()},
                     {l.recent_underflow.begin(), l.recent_underflow.end()}});
  return out;
}

void OverflowDiagnostics::set_windows(const std::vector<FallbackWindow>& windows) {
  for (Layer& l : layers_) {
    l.recent_first.clear();
    l.recent_underflow.clear();
  }
  for (const FallbackWindow& w : windows) {
    Layer* layer = nullptr;
    for (Layer& l : layers_)
      if (l.s.layer == w.layer) layer = &l;
    if (!layer)
      throw std::invalid_argument("fallback window of '" + w.layer + "', which is not a layer");
    layer->recent_first.assign(w.first.begin(), w.first.end());
    layer->recent_underflow.assign(w.underflow.begin(), w.underflow.end());
  }
}

std::vector<LayerOverflowSummary> OverflowDiagnostics::summary() const {
  std::vector<LayerOverflowSummary> out;
  for (const Layer& l : layers_) out.push_back(l.s);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.first_overflows != b.first_overflows) return a.first_overflows > b.first_overflows;
    return a.underflow_share > b.underflow_share;
  });
  return out;
}

}  // namespace ampx::train
