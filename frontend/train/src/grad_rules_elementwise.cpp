// Gradient rules of the activations and the broadcasting arithmetic.
// Broadcast operands get their gradient summed back to their own shape.
#include "grad_rules.hpp"

namespace ampx::train::detail {
namespace {

// dX = <Op>Grad(dY, X or Y): the dedicated backward kernels.
template <OpType kGrad, bool kUsesOutput>
void activation(RuleContext& c) {
  AttrMap attrs;
  if constexpr (kGrad == OpType::kGeluGrad) attrs["approximate"] = c.attr_s("approximate", "none");
  if constexpr (kGrad == OpType::kClipGrad) {
    for (const char* bound : {"min", "max"})
      if (c.node().attrs.contains(bound)) attrs[bound] = c.node().attrs.at(bound);
  }
  c.give(0, c.op(kGrad, "dx", {c.dy(), kUsesOutput ? c.y(0) : c.x(0)}, std::move(attrs)));
}

void add(RuleContext& c) {
  if (c.needs(0)) c.give(0, c.sum_to(c.dy(), c.shape(c.x(0)), "da"));
  if (c.needs(1)) c.give(1, c.sum_to(c.dy(), c.shape(c.x(1)), "db"));
}

void sub(RuleContext& c) {
  if (c.needs(0)) c.give(0, c.sum_to(c.dy(), c.shape(c.x(0)), "da"));
  if (c.needs(1)) c.give(1, c.sum_to(c.op(OpType::kNeg, "neg", {c.dy()}), c.shape(c.x(1)), "db"));
}

void mul(RuleContext& c) {
  if (c.needs(0))
    c.give(0, c.sum_to(c.op(OpType::kMul, "dy_b", {c.dy(), c.x(1)}), c.shape(c.x(0)), "da"));
  if (c.needs(1))
    c.give(1, c.sum_to(c.op(OpType::kMul, "dy_a", {c.dy(), c.x(0)}), c.shape(c.x(1)), "db"));
}

// Y = A / B: dA = dY / B, dB = -dY * A / B^2 = -(dY / B) * Y.
void div(RuleContext& c) {
  const ValueId q = c.op(OpType::kDiv, "dy_over_b", {c.dy(), c.x(1)});
  if (c.needs(0)) c.give(0, c.sum_to(q, c.shape(c.x(0)), "da"));
  if (c.needs(1)) {
    const ValueId qy = c.op(OpType::kMul, "dy_over_b_y", {q, c.y(0)});
    c.give(1, c.sum_to(c.op(OpType::kNeg, "neg", {qy}), c.shape(c.x(1)), "db"));
  }
}

void neg(RuleContext& c) {
  c.give(0, c.op(OpType::kNeg, "dx", {c.dy()}));
}

void exp(RuleContext& c) {  // dX = dY * Y
  c.give(0, c.op(OpType::kMul, "dx", {c.dy(), c.y(0)}));
}

void log(RuleContext& c) {  // dX = dY / X
  c.give(0, c.op(OpType::kDiv, "dx", {c.dy(), c.x(0)}));
}

void sqrt(RuleContext& c) {  // dX = dY / (2 Y)
  const ValueId half = c.op(OpType::kMul, "half_dy", {c.dy(), c.scalar(0.5, "half")});
  c.give(0, c.op(OpType::kDiv, "dx", {half, c.y(0)}));
}

void reciprocal(RuleContext& c) {  // dX = -dY * Y^2
  const ValueId yy = c.op(OpType::kMul, "y2", {c.y(0), c.y(0)});
  c.give(0, c.op(OpType::kNeg, "dx", {c.op(OpType::kMul, "dy_y2", {c.dy(), yy})}));
}

}  // namespace

GradRule elementwise_grad_rule(OpType op) {
  switch (op) {
    case OpType::kRelu:
      return activation<OpType::kReluGrad, false>;
    case OpType::kSigmoid:
      return activation<OpType::kSigmoidGrad, true>;
    case OpType::kTanh:
      return activation<OpType::kTanhGrad, true>;
    case OpType::kGelu:
      return activation<OpType::kGeluGrad, false>;
    case OpType::kClip:
      return activation<OpType::kClipGrad, false>;
    case OpType::kAdd:
      return add;
    case OpType::kSub:
      return sub;
    case OpType::kMul:
      return mul;
    case OpType::kDiv:
      return div;
    case OpType::kNeg:
      return neg;
    case OpType::kExp:
      return exp;
    case OpType::kLog:
      return log;
    case OpType::kSqrt:
      return sqrt;
    case OpType::kReciprocal:
      return reciprocal;
    default:
      return nullptr;
  }
}

}  // namespace ampx::train::detail
