#include "capability.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "ampx/opset/catalogue.hpp"
#include "ampx/opset/validate.hpp"

namespace ampx::vulkan {
namespace {

PlanTarget target_of(const PhysicalDevice& d) {
  return {d.float16, d.storage16, d.storage8, d.blocked_gemm, d.float64, d.loop_budget};
}

// Drops the "node 'x' (Op): " prefix: a capability note is about the node.
std::string strip_where(std::string why) {
  const size_t cut = why.find("): ");
  if (why.rfind("node '", 0) == 0 && cut != std::string::npos) why.erase(0, cut + 3);
  return why;
}

// " [gemm_cpu.f32]": the shader variants the plan dispatches, in order and
// once each, so that an answer says which kernel runs the node (the GEMM
// family is chosen per device: PhysicalDevice::blocked_gemm).
std::string shaders_of(const OpPlan& plan) {
  std::vector<std::string> names;
  for (const Dispatch& d : plan.dispatches)
    if (std::find(names.begin(), names.end(), d.shader) == names.end()) names.push_back(d.shader);
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? " [" : ", ") + n;
  return s.empty() ? s : s + "]";
}

bool has_f32(const NodeView& v) {
  for (size_t i = 0; i < v.num_inputs(); ++i)
    if (v.input(i).dtype == AMPX_DTYPE_F32) return true;
  for (size_t i = 0; i < v.num_outputs(); ++i)
    if (v.output(i).dtype == AMPX_DTYPE_F32) return true;
  return false;
}

}  // namespace

Answer answer_node(const ampx_node_desc& node, const PhysicalDevice& dev) {
  Answer a;
  std::string why;
  // The op set's validation (arity, shapes, attributes, dtype rule), the
  // same for every plugin, so all agree on what a well-formed node is.
  if (!opset::is_valid(node, &why)) {
    a.note = strip_where(why);
    return a;
  }
  try {
    const NodeView v(node);
    const OpPlan plan = plan_node(v, target_of(dev));
    if (!plan.uses_16bit) {
      a.support = AMPX_SUPPORT_NATIVE;
      a.note = has_f32(v) ? "Vulkan f32 kernel" : "Vulkan kernel on raw integer / bool storage";
    } else if (plan.variant == Variant::kF16) {
      a.support = AMPX_SUPPORT_NATIVE;
      a.note = "Vulkan f16 kernel (shaderFloat16 + 16-bit storage)";
    } else if (v.op_type() == "TensorStats") {
      // It reads each input as it is (f16 widened exactly) and computes in
      // f32: nothing is rounded to 16 bits.
      a.support = AMPX_SUPPORT_NATIVE;
      a.note = "Vulkan kernel reading each input in its own dtype";
    } else if (opset::is_data_movement(v.op_type()) || v.op_type() == "BitCast") {
      // Widening to f32 and back is exact, and the bytes moved are halved.
      a.support = AMPX_SUPPORT_NATIVE;
      a.note = "f16 storage; data movement is exact in any dtype";
    } else {
      a.support = AMPX_SUPPORT_EMULATED;
      a.note = "f16 storage, f32 arithmetic: no shaderFloat16";
    }
    a.note += shaders_of(plan);
  } catch (const Unsupported& e) {
    a.note = e.what();
  } catch (const std::exception& e) {
    a.note = strip_where(e.what());
  }
  return a;
}

OpPlan plan_for_prepare(const ampx_node_desc& node, const PhysicalDevice& dev) {
  std::string why;
  const NodeView v(node);
  if (!opset::is_valid(node, &why)) {
    throw StatusError(AMPX_STATUS_INVALID_ARGUMENT, why);
  }
  try {
    return plan_node(v, target_of(dev));
  } catch (const Unsupported& e) {
    throw StatusError(AMPX_STATUS_UNSUPPORTED, v.where() + ": " + e.what());
  }
}

}  // namespace ampx::vulkan
