// libFuzzer target: the training-checkpoint reader behind `ampx train
// --resume` (safetensors' layout: a length, a JSON header, raw tensors).
// Whatever it accepts must write back and read again unchanged.
#include <ampx/train/checkpoint.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ampx::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = ampx::fuzz::write_input(data, size, "epoch-0001.ampxckpt");
  ampx::fuzz::expect_clean_rejection([&] {
    const ampx::train::Checkpoint c = ampx::train::read_checkpoint(path);
    const std::filesystem::path again = path.parent_path() / "again.ampxckpt";
    ampx::train::write_checkpoint(again, c);
    const ampx::train::Checkpoint r = ampx::train::read_checkpoint(again);
    bool same = r.epoch == c.epoch && r.step == c.step && r.seed == c.seed && r.model == c.model &&
                r.options == c.options && r.loss_scale_schedule == c.loss_scale_schedule &&
                r.loss_scale == c.loss_scale && r.fallbacks == c.fallbacks &&
                r.fallback_windows == c.fallback_windows && r.state.size() == c.state.size();
    for (size_t i = 0; same && i < c.state.size(); ++i)
      same = r.state[i].name == c.state[i].name && r.state[i].type == c.state[i].type &&
             r.state[i].data == c.state[i].data;
    if (!same)
      ampx::fuzz::finding("checkpoint", "a checkpoint does not survive a write and a read");
  });
  return 0;
}
