// A one-line progress bar on stderr (bytes done, rate, time left), drawn
// only when stderr is a terminal and the user did not ask for --quiet, so
// pipes and scripts see nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ztcli {

class Progress {
 public:
  // total = expected bytes (0 if unknown).
  Progress(std::string label, uint64_t total, bool quiet);
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  void add(uint64_t bytes);
  // Clears the line (called by the destructor too).
  void done();
  bool enabled() const { return enabled_; }

 private:
  void draw(bool force);

  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace ztcli
