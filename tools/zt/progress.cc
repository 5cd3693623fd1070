#include "progress.h"

#include <unistd.h>

#include <cstdio>

#include "cli.h"

namespace ztcli {

Progress::Progress(std::string label, uint64_t total, bool quiet)
    : label_(std::move(label)), total_(total), enabled_(!quiet && ::isatty(STDERR_FILENO) == 1) {
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() {
  done();
}

void Progress::add(uint64_t bytes) {
  done_ += bytes;
  if (enabled_) draw(!drawn_);  // show at once, then at most every 100 ms
}

void Progress::draw(bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? done_ / secs : 0;
  char line[160];
  if (total_) {
    const double frac = done_ >= total_ ? 1.0 : static_cast<double>(done_) / total_;
    const int width = 24, filled = static_cast<int>(frac * width);
    std::string bar(filled, '#');
    bar.append(width - filled, '.');
    const double eta = rate > 0 ? (total_ - (done_ >= total_ ? total_ : done_)) / rate : 0;
    std::snprintf(line, sizeof line, "%s [%s] %3.0f%% %s / %s  %s/s  ETA %02d:%02d", label_.c_str(), bar.c_str(),
                  frac * 100, human_bytes(done_).c_str(), human_bytes(total_).c_str(),
                  human_bytes(static_cast<uint64_t>(rate)).c_str(), static_cast<int>(eta) / 60,
                  static_cast<int>(eta) % 60);
  } else {
    std::snprintf(line, sizeof line, "%s %s  %s/s", label_.c_str(), human_bytes(done_).c_str(),
                  human_bytes(static_cast<uint64_t>(rate)).c_str());
  }
  std::fprintf(stderr, "\r\033[K%s", line);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::done() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace ztcli
