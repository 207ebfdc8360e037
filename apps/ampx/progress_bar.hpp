// Progress of one device's probe on stderr: on a terminal a plain `\r` bar
// redrawn in place (no dependency), elsewhere (logs, CI) info-level lines.
#pragma once

#include <string>

namespace ampx::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(int done, int total, const std::string& what);
  // Ends the bar's line with `result` (e.g. "stored", "crashed: SIGSEGV").
  void finish(const std::string& result);

 private:
  std::string label_;
  bool tty_;
  bool open_ = false;  // a bar is drawn and its line not yet ended
  size_t last_width_ = 0;
};

}  // namespace ampx::cli
