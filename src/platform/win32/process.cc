// The Windows side of platform/process.h and platform/system.h.
#include "platform/process.h"

#include <windows.h>

#include "platform/system.h"

namespace zt {

unsigned long current_process_id() noexcept {
  return static_cast<unsigned long>(::GetCurrentProcessId());
}

void at_fork(void (*)(), void (*)(), void (*)()) noexcept {}

bool platform::is_windows() noexcept {
  return true;
}

}  // namespace zt
