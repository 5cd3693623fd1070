// The POSIX side of platform/process.h and platform/system.h.
#include "platform/process.h"

#include <pthread.h>
#include <unistd.h>

#include "platform/system.h"

namespace zt {

unsigned long current_process_id() noexcept {
  return static_cast<unsigned long>(::getpid());
}

void at_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept {
  (void)::pthread_atfork(prepare, parent, child);
}

bool platform::is_windows() noexcept {
  return false;
}

}  // namespace zt
