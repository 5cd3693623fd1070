// Which operating system the library was built for, for messages that tell
// a user what is missing where (src/platform/posix/process.cc,
// src/platform/win32/process.cc).
#pragma once

namespace zt {
namespace platform {

bool is_windows() noexcept;

}  // namespace platform
}  // namespace zt
