// The POSIX side of platform/process.h.
#include "platform/process.h"

#include <unistd.h>

namespace zt {

unsigned long current_process_id() noexcept {
  return static_cast<unsigned long>(::getpid());
}

}  // namespace zt
