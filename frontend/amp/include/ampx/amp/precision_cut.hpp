// The cost-aware precision choice for a whole graph, solved exactly as a
// minimum s-t cut (docs/PLANNER.md, "Cost-aware planning").
//
// Each candidate node (one the policy sends to 16-bit and the device runs
// natively in 16-bit) gets a label, f32 or 16-bit, with a predicted time for
// each. Every other node is fixed (f32). A value costs one Cast per target
// dtype its consumers need that differs from its producer's: f32->16 once
// if any consumer is 16-bit while the producer is f32, 16->f32 once if any
// consumer (or the graph output) is f32 while the producer is 16-bit. The
// "once per value and target dtype" term is what a greedy or chain DP gets
// wrong on DAGs; with one auxiliary variable per value and direction every
// term is a pairwise submodular function of two labels, so a minimum cut of
// the network below is a labelling of minimum total predicted time (exact,
// not a heuristic). Ties go to 16-bit (the policy's intent).
#pragma once

#include <vector>

namespace ampx {

struct PrecisionCutProblem {
  static constexpr int kFixedF32 = -1;  // a producer or consumer that stays f32
  static constexpr int kFixed16 = -2;   // one that is 16-bit whatever happens

  struct ValueTerm {
    int producer = kFixedF32;    // candidate index or kFixed*
    std::vector<int> consumers;  // candidate indices or kFixed* (graph output: kFixedF32)
    double cast_to_16 = 0;       // predicted time of its f32 -> 16-bit Cast
    double cast_to_f32 = 0;      // of its 16-bit -> f32 Cast
  };

  std::vector<double> time_f32;  // per candidate
  std::vector<double> time_16;   // per candidate
  std::vector<ValueTerm> values;
};

struct PrecisionCutResult {
  std::vector<bool> use_16bit;  // per candidate
  double total = 0;             // predicted time of this labelling
};

PrecisionCutResult solve_precision_cut(const PrecisionCutProblem& problem);

// The objective for a given labelling (tests compare against brute force).
double precision_cut_cost(const PrecisionCutProblem& problem, const std::vector<bool>& use_16bit);

}  // namespace ampx
