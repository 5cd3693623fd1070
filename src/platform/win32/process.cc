// The Windows side of platform/process.h.
#include "platform/process.h"

#include <windows.h>

namespace zt {

unsigned long current_process_id() noexcept {
  return static_cast<unsigned long>(::GetCurrentProcessId());
}

}  // namespace zt
