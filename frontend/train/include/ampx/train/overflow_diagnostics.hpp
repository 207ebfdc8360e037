// Per-layer overflow diagnostics and the automatic FP32 fallback
// (docs/TRAINING.md, "Overflow diagnostics"). The step's TensorStats probe
// returns, for every layer's activation and every gradient its backward
// produced, the largest finite magnitude, the non-finite share and the
// share below the 16-bit normal range; this class turns those rows into
// "which layer overflowed first" per step, a per-layer summary, and the
// layers due to move to f32.
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/train/fallback_record.hpp>
#include <ampx/train/training_graph.hpp>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ampx::train {

struct OverflowOptions {
  bool diagnose = false;       // probe every step (auto_fallback implies it)
  bool auto_fallback = false;  // move offending layers to f32
  // A layer named first at more than `fallback_overflows` overflowed steps
  // within the last `fallback_window` steps moves to f32.
  int64_t fallback_overflows = 2;
  int64_t fallback_window = 200;
  // > 0: a 16-bit layer whose gradients had on average more than this share
  // of their nonzero elements below the normal range, over a full window,
  // moves to f32 as well. 0: underflow is reported only.
  double fallback_underflow = 0;
  // Throws std::invalid_argument naming the bad option.
  void validate() const;
};

// An overflowed step: the first probed tensor, in the order the step
// computed them, that had a non-finite element.
struct OverflowEvent {
  int64_t step = 0;
  std::string layer;
  std::string op;
  OverflowProbe::Kind kind = OverflowProbe::Kind::kActivation;
  std::string tensor;
  double nonfinite_share = 0;  // of the tensor's elements
  double amax = 0;             // largest finite magnitude in it
  DType dtype = DType::kF32;   // the layer's compute dtype in the plan
  double dtype_max = 0;        // the largest finite value of that dtype
  // Whether it counts towards the layer's fallback: a gradient overflow
  // that the dynamic loss scale can still cure by backing off does not.
  bool counts = true;
};

struct LayerOverflowSummary {
  std::string layer;
  std::string op;
  DType dtype = DType::kF32;      // compute dtype in the current plan
  int64_t first_overflows = 0;    // overflowed steps that named it first
  int64_t counted_overflows = 0;  // of those, the ones that count towards a fallback
  int64_t nonfinite_steps = 0;    // steps with any of its tensors non-finite
  double activation_amax = 0;     // largest finite magnitudes seen
  double gradient_amax = 0;
  double underflow_share = 0;  // its gradients, mean over the probed steps
  int64_t steps = 0;           // steps probed
  bool fallback = false;       // moved to f32 by the automatic fallback
};

class OverflowDiagnostics {
 public:
  OverflowDiagnostics() = default;
  // `model_nodes`: the forward model's node names (the only layers a
  // fallback may name: the loss belongs to the step, not the model).
  OverflowDiagnostics(const TrainingGraph& tg, const AmpPlan& plan, DType half,
                      std::vector<std::string> model_nodes);
  // A new plan (after a fallback): the same probes, new dtypes.
  void replan(const TrainingGraph& tg, const AmpPlan& plan);

  // One step's "overflow" output (rows of [amax, non-finite share,
  // underflow share]); returns the event when the step overflowed.
  // `scale_can_back_off`: the loss scale is dynamic and above its floor,
  // so a gradient overflow is the schedule's to fix, not the layer's (the
  // first steps at 2^24 overflow by design); an activation overflow is
  // the layer's whatever the scale.
  std::optional<OverflowEvent> record(int64_t step, std::span<const float> stats,
                                      bool scale_can_back_off = false);
  // Layers due to move to f32 after step `step`, under `options`; each
  // layer once over the whole run.
  std::vector<FallbackRecord> due_for_fallback(const OverflowOptions& options, int64_t step);
  void mark_fallback(const std::string& layer);
  // The windows of the layers that have anything in them, and setting them
  // back (a resumed run). Throws std::invalid_argument naming a layer that
  // is not probed.
  std::vector<FallbackWindow> windows() const;
  void set_windows(const std::vector<FallbackWindow>& windows);

  // Every layer, most first overflows first, then the highest underflow.
  std::vector<LayerOverflowSummary> summary() const;
  const std::vector<OverflowEvent>& events() const { return events_; }
  DType half() const { return half_; }

 private:
  struct Layer {
    LayerOverflowSummary s;
    double underflow_sum = 0;
    bool model_node = false;
    std::deque<int64_t> recent_first;     // steps it was named first
    std::deque<double> recent_underflow;  // its gradients' share per step
  };
  struct Probe {
    size_t layer = 0;  // into layers_
    OverflowProbe::Kind kind = OverflowProbe::Kind::kActivation;
    std::string tensor;
    int64_t elements = 0;
  };
  std::vector<Layer> layers_;
  std::vector<Probe> probes_;
  std::vector<OverflowEvent> events_;
  DType half_ = DType::kF16;
  int64_t window_ = 0;  // the longest window asked for (how much history to keep)
};

// The largest finite value of a float dtype (f16 65504, bf16 ~3.39e38).
double dtype_max_finite(DType dtype);
// The smallest normal value of a 16-bit type (f16 2^-14, bf16 2^-126).
double dtype_min_normal(DType dtype);

}  // namespace ampx::train
