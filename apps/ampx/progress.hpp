// A one-line progress bar on stderr for long commands, drawn only when
// stderr is a terminal (logs and pipes get nothing from it).
#pragma once

#include <fmt/format.h>

#include <unistd.h>
#include <cstdio>
#include <string>

namespace ampx::cli {

class ProgressBar {
 public:
  ProgressBar() : tty_(isatty(STDERR_FILENO) != 0) {}
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { finish(); }

  void update(int done, int total, const std::string& what) {
    if (!tty_ || total <= 0) return;
    constexpr int kWidth = 30;
    const int filled = done * kWidth / total;
    std::string label = what.size() > 48 ? what.substr(0, 45) + "..." : what;
    fmt::print(stderr, "\r[{}{}] {}/{} {:<48}", std::string(static_cast<size_t>(filled), '#'),
               std::string(static_cast<size_t>(kWidth - filled), '.'), done, total, label);
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) fmt::print(stderr, "\n");
    drawn_ = false;
  }

 private:
  bool tty_;
  bool drawn_ = false;
};

}  // namespace ampx::cli
