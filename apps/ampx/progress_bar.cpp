#include "progress_bar.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>
#include <cstdio>

namespace ampx::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), tty_(::isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (open_) std::fputc('\n', stderr);
}

void ProgressBar::update(int done, int total, const std::string& what) {
  if (!tty_) {
    spdlog::info("probe {}: {}/{} {}", label_, done, total, what);
    return;
  }
  constexpr int kWidth = 30;
  const int filled = total > 0 ? done * kWidth / total : 0;
  std::string line = fmt::format("{:<14} [{}{}] {:>4}/{:<4} {}", label_, std::string(filled, '#'),
                                 std::string(kWidth - filled, '-'), done, total, what);
  if (line.size() > 100) line.resize(100);
  // Pad over the previous, possibly longer, text.
  const size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  last_width_ = width;
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
  open_ = true;
}

void ProgressBar::finish(const std::string& result) {
  if (!tty_) {
    spdlog::info("probe {}: {}", label_, result);
    return;
  }
  std::string line = fmt::format("{:<14} {}", label_, result);
  if (line.size() < last_width_) line.append(last_width_ - line.size(), ' ');
  std::fprintf(stderr, "\r%s\n", line.c_str());
  std::fflush(stderr);
  open_ = false;
}

}  // namespace ampx::cli
