#include <ampx/capability/profile_capabilities.hpp>
#include <ampx/opset/work.hpp>
#include <ampx/plugin_support.hpp>

#include <cmath>
#include <limits>

namespace ampx::capability {

namespace {

std::string compute_dtype(const ampx_node_desc& node) {
  for (size_t i = 0; i < node.num_outputs; ++i)
    if (plugin_support::is_float_dtype(node.outputs[i].dtype))
      return plugin_support::dtype_name(node.outputs[i].dtype);
  for (size_t i = 0; i < node.num_inputs; ++i)
    if (plugin_support::is_float_dtype(node.inputs[i].dtype))
      return plugin_support::dtype_name(node.inputs[i].dtype);
  return node.num_outputs ? plugin_support::dtype_name(node.outputs[0].dtype) : "?";
}

}  // namespace

ProfileCapabilities::ProfileCapabilities(DeviceProfile profile)
    : profile_(std::move(profile)), cost_(make_profile_cost_model(profile_, nullptr)) {}

std::string ProfileCapabilities::device_id() const {
  return profile_.device_id.empty() ? profile_.fingerprint : profile_.device_id;
}

CapabilitySource::Answer ProfileCapabilities::query(const ampx_node_desc& node) {
  const std::string op = node.op_type ? node.op_type : "";
  std::string dtype = compute_dtype(node);
  // A Cast is answered by the probed Cast of the same dtype pair.
  if (op == "Cast" && node.num_inputs == 1 && node.num_outputs == 1) {
    for (const CastCost& c : profile_.casts)
      if (c.from == plugin_support::dtype_name(node.inputs[0].dtype) &&
          c.to == plugin_support::dtype_name(node.outputs[0].dtype))
        return {AMPX_SUPPORT_NATIVE, cost_->node_us(node), "profile: probed Cast"};
  }
  const auto w = opset::estimate_work(node);
  const double work = w.flops > 0 ? w.flops : w.bytes;
  const OpTiming* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (const OpTiming& t : profile_.ops) {
    if (t.op != op || t.dtype != dtype) continue;
    const double tw = t.flops > 0 ? t.flops : t.bytes;
    const double d = std::abs(std::log(std::max(tw, 1.0)) - std::log(std::max(work, 1.0)));
    if (d < best_d) {
      best_d = d;
      best = &t;
    }
  }
  if (!best)
    return {AMPX_SUPPORT_UNSUPPORTED, -1,
            "profile " + profile_.fingerprint + " has no probe of " + dtype + " " + op};
  Answer a;
  a.support = best->support;
  a.note = "profile: " + best->shape_class + (best->note.empty() ? "" : ": " + best->note);
  a.cost_us = a.support == AMPX_SUPPORT_UNSUPPORTED ? -1 : cost_->node_us(node);
  return a;
}

}  // namespace ampx::capability
