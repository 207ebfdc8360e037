// A layer the automatic FP32 fallback moved to f32 (docs/TRAINING.md,
// "Overflow diagnostics"): planned with intent reason overflow-fallback
// from then on, kept in checkpoints, and so kept on resume.
#pragma once

#include <cstdint>
#include <string>

namespace ampx::train {

struct FallbackRecord {
  std::string layer;   // a node of the model
  std::string cause;   // "overflow" or "underflow"
  int64_t step = 0;    // after which step
  std::string detail;  // "named first at 3 overflowed steps in the last 200"
  friend bool operator==(const FallbackRecord&, const FallbackRecord&) = default;
};

}  // namespace ampx::train
