// `progress=` of the long calls (tune, report): False or None, nothing;
// True, the CLI's progress bar on stderr (a bar on a terminal, info lines
// elsewhere: apps/ampx/progress_bar.hpp); a callable, called as
// fn(done, total, what) with the GIL taken for the call. The callable must
// not call into the same Session (its lock is held meanwhile).
#pragma once

#include "bindings.hpp"
#include "progress_bar.hpp"

#include <optional>
#include <string>

namespace ampx::python {

class Progress {
 public:
  Progress(nb::object spec, std::string label);
  bool active() const { return bar_.has_value() || callback_.is_valid(); }
  // From a thread that released the GIL.
  void update(int done, int total, const std::string& what);
  void finish(const std::string& result);

 private:
  std::optional<cli::ProgressBar> bar_;
  nb::object callback_;
};

}  // namespace ampx::python
