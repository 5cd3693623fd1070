// Joins a std::thread when the scope ends, whichever way it ends: a thread
// started beside a blocking call (connections warmed while an index or a
// manifest is in flight) must not outlive the objects it uses if that call
// throws.
#pragma once

#include <thread>

namespace zt {

struct JoinOnExit {
  std::thread &thread;
  ~JoinOnExit() {
    if (thread.joinable()) thread.join();
  }
};

}  // namespace zt
