// Training data: `.npy` pairs (inputs [N, ...] f32, labels [N] i64) and the
// built-in `builtin:digits` (scikit-learn's 8x8 handwritten digits, read
// from the file Debian's python3-sklearn ships; docs/TRAINING.md).
#pragma once

#include <ampx/exec/host_tensor.hpp>

#include <cstdint>

#include <filesystem>
#include <string_view>

namespace ampx::train {

// Samples in rows: inputs [N, ...] (f32), labels [N] (i64; MSE: f32 [N, ...]).
struct Dataset {
  HostTensor inputs;
  HostTensor labels;
  int64_t size() const { return inputs.type.shape.empty() ? 0 : inputs.type.shape[0]; }
};

struct SplitDataset {
  Dataset train;
  Dataset test;
};

// The digits: 1,797 images [N, 1, 8, 8] scaled to [0, 1], labels 0-9. The
// split is fixed: the rows in the order of a splitmix64 Fisher-Yates shuffle
// with seed 0, the first 1,437 (80 %) for training and the last 360 for
// testing. The file is `AMPX_DIGITS_CSV` when set, else scikit-learn's
// digits.csv.gz in Debian's python3 dist-packages. Throws
// std::invalid_argument naming the file and what is wrong.
SplitDataset load_digits();
std::filesystem::path digits_csv_path();

// A SPEC of `ampx train --data/--eval`: "builtin:digits" (its train or test
// split, as `test` says), a directory holding inputs.npy and labels.npy, or
// "INPUTS.npy,LABELS.npy".
Dataset load_dataset(std::string_view spec, bool test = false);

}  // namespace ampx::train
