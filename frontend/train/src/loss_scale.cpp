#include <ampx/train/loss_scale.hpp>

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace ampx::train {
namespace {

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t comma = s.find(',');
    parts.push_back(s.substr(0, comma));
    if (comma == std::string_view::npos) return parts;
    s.remove_prefix(comma + 1);
  }
}

double number(std::string_view text, std::string_view what, std::string_view whole) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument("loss scale '" + std::string(whole) + "': " + std::string(what) +
                                " '" + std::string(text) + "' is not a number");
  return v;
}

std::string plain(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

}  // namespace

LossScaleOptions LossScaleOptions::none() {
  return {};
}

LossScaleOptions LossScaleOptions::fixed(double scale) {
  LossScaleOptions o;
  o.kind = LossScaleKind::kFixed;
  o.init = scale;
  o.skip_nonfinite = true;  // MindSpore's drop_overflow_update=True
  return o;
}

LossScaleOptions LossScaleOptions::dynamic(double init, double factor, int64_t window) {
  LossScaleOptions o;
  o.kind = LossScaleKind::kDynamic;
  o.init = init;
  o.factor = factor;
  o.window = window;
  o.floor = 1.0;
  o.skip_nonfinite = true;
  return o;
}

LossScaleOptions LossScaleOptions::torch() {
  LossScaleOptions o = dynamic(65536.0, 2.0, 2000);
  o.floor = 0.0;
  return o;
}

LossScaleOptions LossScaleOptions::parse(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view args =
      colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  const bool has_args = colon != std::string_view::npos;
  LossScaleOptions o;
  if (kind == "none" || kind == "torch") {
    if (has_args)
      throw std::invalid_argument("loss scale '" + std::string(text) + "': '" + std::string(kind) +
                                  "' takes no parameters");
    o = kind == "none" ? none() : torch();
  } else if (kind == "fixed") {
    o = fixed();
    if (has_args) o.init = number(args, "the scale", text);
  } else if (kind == "dynamic") {
    o = dynamic();
    if (has_args) {
      const auto parts = split_commas(args);
      if (parts.size() > 3)
        throw std::invalid_argument("loss scale '" + std::string(text) +
                                    "': expected dynamic[:INIT[,FACTOR[,WINDOW]]]");
      o.init = number(parts[0], "the initial scale", text);
      if (parts.size() > 1) o.factor = number(parts[1], "the factor", text);
      if (parts.size() > 2) {
        const double w = number(parts[2], "the window", text);
        if (w != std::floor(w) || w < 0 || w > 1e15)
          throw std::invalid_argument("loss scale '" + std::string(text) + "': the window '" +
                                      std::string(parts[2]) + "' is not a whole number of steps");
        o.window = static_cast<int64_t>(w);
      }
    }
  } else {
    throw std::invalid_argument("unknown loss scale '" + std::string(text) +
                                "' (expected none, fixed[:S], dynamic[:INIT[,FACTOR[,WINDOW]]] "
                                "or torch)");
  }
  try {
    o.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("loss scale '" + std::string(text) + "': " + e.what());
  }
  return o;
}

LossScaleOptions LossScaleOptions::default_for(AmpLevel level, DType half, std::string* why) {
  auto say = [&](const char* text) {
    if (why) *why = text;
  };
  if (level != AmpLevel::kO2) {
    say("no loss scaling: MindSpore scales by default at O2 only");
    return none();
  }
  if (half == DType::kBF16) {
    say("no loss scaling: bf16 has f32's exponent range, its gradients do not underflow as f16's "
        "do");
    return none();
  }
  say("dynamic loss scaling, MindSpore's O2 default (DynamicLossScaleManager: 2^24, x2 after "
      "2000 clean steps, /2 on overflow)");
  return dynamic();
}

void LossScaleOptions::validate() const {
  if (kind == LossScaleKind::kNone) return;
  // The scale is fed to the step as an f32: it must be one.
  if (!(init > 0) || !std::isfinite(static_cast<float>(init)))
    throw std::invalid_argument("the scale must be positive and an f32 (at most 3.4e38), got " +
                                plain(init));
  if (kind == LossScaleKind::kDynamic) {
    if (!(factor > 1) || !std::isfinite(factor))
      throw std::invalid_argument("the factor must be greater than 1, got " + plain(factor));
    if (window < 1) throw std::invalid_argument("the window must be at least 1 step");
  }
}

std::string LossScaleOptions::str() const {
  switch (kind) {
    case LossScaleKind::kNone:
      return "none";
    case LossScaleKind::kFixed:
      return "fixed:" + plain(init);
    case LossScaleKind::kDynamic:
      if (*this == torch()) return "torch";
      return "dynamic:" + plain(init) + "," + plain(factor) + "," + std::to_string(window);
  }
  return "?";
}

LossScaler::LossScaler(LossScaleOptions options) : options_(options) {
  options_.validate();
  state_.scale = options_.kind == LossScaleKind::kNone ? 1.0 : options_.init;
}

bool LossScaler::at_floor() const {
  return options_.kind != LossScaleKind::kDynamic || state_.scale <= options_.floor;
}

void LossScaler::update(bool finite, int64_t step) {
  ++state_.steps;
  if (!finite) {
    ++state_.overflow_steps;
    state_.last_overflow_step = step;
    // Counted toward giving up only once nothing can change any more.
    state_.consecutive_overflows = at_floor() ? state_.consecutive_overflows + 1 : 0;
    state_.good_steps = 0;
    if (options_.kind == LossScaleKind::kDynamic)
      state_.scale = std::max(state_.scale / options_.factor, options_.floor);
    return;
  }
  state_.consecutive_overflows = 0;
  if (options_.kind != LossScaleKind::kDynamic) return;
  if (++state_.good_steps >= options_.window) {
    state_.good_steps = 0;
    // Never grows past what the f32 loss_scale input holds (GradScaler's
    // rule: its scale is an f32 tensor, and never becomes inf).
    if (std::isfinite(static_cast<float>(state_.scale * options_.factor)))
      state_.scale *= options_.factor;
  }
}

bool LossScaler::given_up() const {
  return state_.consecutive_overflows >= kMaxOverflowsAtFloor;
}

}  // namespace ampx::train
