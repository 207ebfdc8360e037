// Session.plan's keyword arguments as a PlanRequest: the CLI's mapping of
// its planning flags (PolicyOptions::to_policy and plan_request in
// apps/ampx/cli_common.cpp), with the keywords named in the messages.
#include "bindings.hpp"

namespace ampx::python {

PlanArgs plan_args(const std::string& amp, const std::string& dtype,
                   const std::vector<std::string>& keep_fp32,
                   const std::vector<std::string>& force_16bit,
                   const std::vector<std::pair<std::string, std::string>>& place,
                   const std::optional<std::string>& white_list,
                   const std::optional<std::string>& black_list, bool cost, bool tuned,
                   bool capability_blind) {
  return {.amp = amp,
          .dtype = dtype,
          .keep_fp32 = keep_fp32,
          .force_16bit = force_16bit,
          .white_list = white_list,
          .black_list = black_list,
          .place = place,
          .costs = cost ? CostUse::kModel : CostUse::kNone,
          .tuned = tuned ? TunedPlans::kUse : TunedPlans::kIgnore,
          .capabilities = capability_blind ? CapabilityUse::kBlind : CapabilityUse::kAware};
}

PlanRequest make_plan_request(const PlanArgs& args, const std::string& model, Fallback fallback) {
  PlanRequest r;
  AmpPolicy& p = r.policy;
  p.level = parse_amp_level(args.amp);  // the CLI's message, which names the level
  const bool dtype_auto = args.dtype == "auto";
  const auto half = dtype_auto ? std::optional<DType>(DType::kF16) : parse_dtype(args.dtype);
  if (!half || !is_16bit_float(*half))
    throw std::invalid_argument("dtype '" + args.dtype + "': expected f16, bf16 or auto");
  p.half = *half;
  r.half = dtype_auto ? HalfDType::kAuto : HalfDType::kPolicy;
  if (args.white_list) p.white_list = parse_op_list(*args.white_list, "white_list");
  if (args.black_list) p.black_list = parse_op_list(*args.black_list, "black_list");
  for (const std::string& name : args.keep_fp32) {
    validate_override_pattern(name, "keep_fp32");
    p.overrides.push_back({name, false});
  }
  for (const std::string& name : args.force_16bit) {
    validate_override_pattern(name, "force_16bit");
    p.overrides.push_back({name, true});
  }
  for (const auto& [pattern, device] : args.place) {
    validate_override_pattern(pattern, "place");
    if (device.empty()) throw std::invalid_argument("place '" + pattern + "': the device is empty");
    r.pins.emplace_back(pattern, device);
  }
  r.tuned = args.tuned;
  r.capabilities = args.capabilities;
  r.costs = args.costs;
  r.fallback = fallback;
  // Planned to run: the rewritten graph is kept, so the plan compiles and
  // exports (`ampx run`'s and `ampx export`'s plan; the decisions are the
  // same as `ampx plan`'s).
  r.purpose = PlanPurpose::kRun;
  r.model_key = model;
  return r;
}

}  // namespace ampx::python
