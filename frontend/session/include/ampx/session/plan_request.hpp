// Everything a plan depends on, in one value: Session::plan(graph, request)
// (docs/SESSION.md). The CLI's planning flags map onto it one to one
// (`--amp`, `--dtype`, `--place`, `--profile`, `--no-tuned`, `--no-cost`,
// `--capability-blind`, `--no-fallback`); the device list (`--device`),
// the fallback, the cost step and tuned plans are the Session's
// (SessionOptions) unless the request names them.
#pragma once

#include <ampx/amp/policy.hpp>
#include <ampx/capability/profile.hpp>
#include <ampx/exec/selected_devices.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ampx {

// The 16-bit type: the policy's (f16 or bf16), or `auto`: what the
// devices run natively for this graph (choose_half_dtype, docs/PLANNER.md).
enum class HalfDType { kPolicy, kAuto };

// What the plan is for. kInspect: the decisions only (`ampx plan`,
// reports); kExport: the rewritten graph too (AmpPlan::graph); kRun: the
// graph, and the devices must be live here (a stored profile then only
// prices them).
enum class PlanPurpose { kInspect, kExport, kRun };

// A plan `ampx tune` stored for the same model, devices and options
// (docs/TUNING.md): applied, or planned afresh regardless.
enum class TunedPlans { kUse, kIgnore };

// kAware: 16-bit only where the device runs it natively and the cost step
// agrees. kBlind: as a policy-string framework would (`--capability-blind`,
// PlanOptions::capability_blind).
enum class CapabilityUse { kAware, kBlind };

// A node no requested device can run: on the reference device, the last
// resort (kToReference), or an error listing every such node (kRefuse,
// `--no-fallback`).
enum class Fallback { kToReference, kRefuse };

// The cost step (`--no-cost`: kNone keeps every node the device runs
// natively in 16-bit at 16-bit).
enum class CostUse { kModel, kNone };

// Whether plan() logs the `auto` ranking (info) and the nodes that fall
// back (warning), as `ampx plan`, `run`, `export` and `tune` show them
// (kReport), or neither (kQuiet): a caller that plans one model again and
// again (a training step per batch size and its evaluation, a
// ShapeCachedModel per input shape).
enum class PlanLogging { kReport, kQuiet };

struct PlanRequest {
  // Device list in preference order, or "auto"; empty: the session's
  // (SessionOptions::devices).
  std::string devices{};
  // Level, lists and overrides; its `half` counts with HalfDType::kPolicy.
  AmpPolicy policy{};
  HalfDType half = HalfDType::kPolicy;
  // `--place`: pattern (name or prefix*) -> device id of the selection.
  std::vector<std::pair<std::string, std::string>> pins{};
  // `--profile`: plan for a device described by a stored profile (a file
  // from `ampx db export`, or one already loaded) instead of the live one.
  // One device only: no pins, no list, no `auto`.
  std::variant<std::monostate, std::filesystem::path, capability::DeviceProfile> profile{};
  // nullopt: the session's (SessionOptions::use_tuned, use_costs, fallback).
  std::optional<TunedPlans> tuned{};
  CapabilityUse capabilities = CapabilityUse::kAware;
  std::optional<CostUse> costs{};
  std::optional<Fallback> fallback{};
  PlanPurpose purpose = PlanPurpose::kRun;
  // The model's name in the capability database's tuned plans (the MODEL
  // argument); empty: the graph's name.
  std::string model_key{};
  // Plan on the devices an earlier plan chose (its PlannedModel::selection)
  // instead of selecting for this graph: every plan of one model, at
  // another batch size or shape, runs where the first one did (`auto` is
  // not ranked again). The selection's devices and their cost models
  // stand: `devices`, `fallback` and `costs` do not change them. Not with a
  // profile.
  std::optional<DeviceSelection> selection{};
  PlanLogging logging = PlanLogging::kReport;

  bool has_profile() const { return !std::holds_alternative<std::monostate>(profile); }
};

}  // namespace ampx
