// A layer the automatic FP32 fallback moved to f32 (docs/TRAINING.md,
// "Overflow diagnostics"): planned with intent reason overflow-fallback
// from then on, kept in checkpoints, and so kept on resume.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ampx::train {

struct FallbackRecord {
  std::string layer;   // a node of the model
  std::string cause;   // "overflow" or "underflow"
  int64_t step = 0;    // after which step
  std::string detail;  // "named first at 3 overflowed steps in the last 200"
  friend bool operator==(const FallbackRecord&, const FallbackRecord&) = default;
};

// What the fallback's window holds for one layer: the steps it was named
// first at an overflow that counts, and its gradients' underflow share per
// clean step. Kept in checkpoints, so that a resumed run moves a layer at
// the step the uninterrupted run would.
struct FallbackWindow {
  std::string layer;
  std::vector<int64_t> first;
  std::vector<double> underflow;
  friend bool operator==(const FallbackWindow&, const FallbackWindow&) = default;
};

}  // namespace ampx::train
