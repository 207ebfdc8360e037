// The recurrent ops' attributes read once (docs/OPS.md, "LSTM, GRU, RNN"):
// the shape rules and every kernel take the same reading, so the
// activation list, its alpha/beta consumption and the defaults are decided
// in one place. ONNX's semantics, layout 0 (the importer transposes
// layout 1).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "ampx/plugin_support.hpp"

namespace ampx::opset {

enum class RecurrentKind { kLstm, kGru, kRnn };

// ONNX's activation functions for the recurrent ops.
struct RecurrentActivation {
  enum Fn {
    kSigmoid,
    kTanh,
    kRelu,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Fn fn = kSigmoid;
  double alpha = 0, beta = 0;

  template <class T>
  T operator()(T x) const {
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
    switch (fn) {
      case kSigmoid:
        return T(1) / (T(1) + std::exp(-x));
      case kTanh:
        return std::tanh(x);
      case kRelu:
        return x > T(0) ? x : T(0);
      case kAffine:
        return a * x + b;
      case kLeakyRelu:
        return x >= T(0) ? x : a * x;
      case kThresholdedRelu:
        return x > a ? x : T(0);
      case kScaledTanh:
        return a * std::tanh(b * x);
      case kHardSigmoid:
        return std::min(std::max(a * x + b, T(0)), T(1));
      case kElu:
        return x >= T(0) ? x : a * (std::exp(x) - T(1));
      case kSoftsign:
        return x / (T(1) + std::abs(x));
      case kSoftplus:
        return std::log1p(std::exp(-std::abs(x))) + std::max(x, T(0));
    }
    return x;
  }
};

struct RecurrentSpec {
  RecurrentKind kind = RecurrentKind::kLstm;
  int64_t hidden = 0;
  int directions = 1;    // 2: bidirectional
  bool reverse = false;  // direction "reverse" (one direction)
  int gates = 4;         // per direction in W and R: LSTM 4 (i, o, f, c), GRU 3 (z, r, h), RNN 1
  int functions = 3;     // activations per direction: LSTM 3 (f, g, h), GRU 2, RNN 1
  // functions x directions, direction 0 first.
  std::vector<RecurrentActivation> activations;
  double clip = 0;  // > 0: pre-activations clipped to [-clip, clip]
  bool input_forget = false;
  bool linear_before_reset = false;

  const RecurrentActivation& f(int dir, int i) const {
    return activations[static_cast<size_t>(dir * functions + i)];
  }
};

// Reads and checks the attributes of an LSTM, GRU or RNN node; fails
// through v.fail() (naming the node) on a bad value.
RecurrentSpec recurrent_spec(const plugin_support::NodeView& v);

}  // namespace ampx::opset
