// Resuming a run from a checkpoint file (docs/TRAINING.md, "Checkpoints"):
// `ampx train --resume` and Python's Trainer.restore / fit(resume=True)
// read, check and take it up the same way, with the same one-line errors.
#pragma once

#include <ampx/session/trainer.hpp>
#include <ampx/train/checkpoint.hpp>

#include <filesystem>
#include <optional>

namespace ampx::train {

// Reads `file` and restores it into `trainer`. Throws std::runtime_error
// "FILE: <what is wrong>" for a truncated, corrupt or foreign file
// (read_checkpoint) or one that does not fit this run (Trainer::restore:
// another model, other options, another seed or loss-scale schedule),
// leaving the trainer as it was. Returns the checkpoint taken up.
Checkpoint restore_from_file(Trainer& trainer, const std::filesystem::path& file,
                             Trainer::LossScaleOnRestore loss_scale);

struct Resumed {
  std::filesystem::path file;
  Checkpoint checkpoint;
};
// The newest checkpoint in `dir` (latest_checkpoint) restored as above;
// nullopt, changing nothing, when `dir` holds none yet.
std::optional<Resumed> resume_from_latest(Trainer& trainer, const std::filesystem::path& dir,
                                          Trainer::LossScaleOnRestore loss_scale);

}  // namespace ampx::train
