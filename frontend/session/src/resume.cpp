#include <ampx/session/resume.hpp>

#include <stdexcept>

namespace ampx::train {

Checkpoint restore_from_file(Trainer& trainer, const std::filesystem::path& file,
                             Trainer::LossScaleOnRestore loss_scale) {
  Checkpoint c = read_checkpoint(file);  // names the file itself
  try {
    trainer.restore(c, loss_scale);
  } catch (const std::invalid_argument& e) {
    // restore() changed nothing; the message gains the file, as read's have it.
    throw std::runtime_error(file.string() + ": " + e.what());
  }
  return c;
}

std::optional<Resumed> resume_from_latest(Trainer& trainer, const std::filesystem::path& dir,
                                          Trainer::LossScaleOnRestore loss_scale) {
  const auto latest = latest_checkpoint(dir);
  if (!latest) return std::nullopt;
  return Resumed{*latest, restore_from_file(trainer, *latest, loss_scale)};
}

}  // namespace ampx::train
