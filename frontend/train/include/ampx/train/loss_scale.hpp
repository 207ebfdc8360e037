// Loss scaling (docs/TRAINING.md, "Loss scaling"): the loss is multiplied by
// a scale S before the backward pass, so that 16-bit gradients stay above
// f16's underflow; the updates divide it out again (hyper's grad_scale =
// 1/S). The step's UpdateGuard checks on the device that every gradient is
// finite and skips the update when one is not; the LossScaler here is the
// host-side schedule that turns that one flag per step into the next S.
//
// Schedules: MindSpore's DynamicLossScaleManager (2^24, x2 after 2000 clean
// steps, /2 on an overflow, never below 1) and FixedLossScaleManager (128,
// overflowed updates dropped), and PyTorch GradScaler's (2^16, x2 after
// 2000, x0.5, no floor).
#pragma once

#include <ampx/amp/policy.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace ampx::train {

enum class LossScaleKind { kNone, kFixed, kDynamic };

struct LossScaleOptions {
  LossScaleKind kind = LossScaleKind::kNone;
  double init = 1.0;      // the first scale (fixed: the scale)
  double factor = 2.0;    // dynamic: x factor after `window` clean steps, / factor on overflow
  int64_t window = 2000;  // dynamic
  double floor = 1.0;     // dynamic: the scale never goes below it (0: no floor)
  // An update whose gradients are not all finite is skipped (UpdateGuard's
  // skip_nonfinite). `none` applies it, as training without a scaler does.
  bool skip_nonfinite = false;

  static LossScaleOptions none();
  static LossScaleOptions fixed(double scale = 128.0);
  static LossScaleOptions dynamic(double init = 16777216.0, double factor = 2.0,
                                  int64_t window = 2000);
  static LossScaleOptions torch();  // 2^16, x2 after 2000, x0.5, no floor
  // "none", "fixed[:S]", "dynamic[:INIT[,FACTOR[,WINDOW]]]" or "torch".
  // Throws std::invalid_argument with one line naming the bad part.
  static LossScaleOptions parse(std::string_view text);
  // The level's default (docs/PLANNER.md): dynamic for O2 in f16, none
  // otherwise; bf16 none at every level, as bf16 has f32's range. `why`
  // (optional) gets the reason in words.
  static LossScaleOptions default_for(AmpLevel level, DType half, std::string* why = nullptr);
  // Throws std::invalid_argument: a scale that is not positive and finite,
  // a factor <= 1, a window of 0.
  void validate() const;
  // The canonical text, which parse() reads back: "dynamic:16777216,2,2000".
  std::string str() const;
  friend bool operator==(const LossScaleOptions&, const LossScaleOptions&) = default;
};

// What a checkpoint keeps of the schedule.
struct LossScaleState {
  double scale = 1.0;
  int64_t good_steps = 0;           // clean steps since the last overflow or growth
  int64_t last_overflow_step = -1;  // step number (from 1), -1: none yet
  int64_t overflow_steps = 0;       // steps whose gradients were not all finite
  int64_t steps = 0;                // steps seen
  int64_t consecutive_overflows = 0;
  friend bool operator==(const LossScaleState&, const LossScaleState&) = default;
};

class LossScaler {
 public:
  // After this many overflowed steps in a row with the scale at its lowest
  // (none, fixed, or dynamic at its floor), the run stops: nothing will
  // change by itself. MindSpore gives up after 1000; ampx sooner, as each
  // of those steps is wasted.
  static constexpr int64_t kMaxOverflowsAtFloor = 100;

  explicit LossScaler(LossScaleOptions options = {});
  const LossScaleOptions& options() const { return options_; }
  const LossScaleState& state() const { return state_; }
  void set_state(const LossScaleState& state) { state_ = state; }
  double scale() const { return state_.scale; }
  // The scale can go no lower: an overflow now changes nothing.
  bool at_floor() const;
  // After step `step` (from 1): whether all its gradients were finite.
  void update(bool finite, int64_t step);
  // Stop the run: kMaxOverflowsAtFloor overflows in a row at the floor.
  bool given_up() const;

 private:
  LossScaleOptions options_;
  LossScaleState state_;
};

}  // namespace ampx::train
