// The Windows side of tools/zt/platform.h.
#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cstdio>

#include "cli.h"
#include "platform.h"
#include "platform/win32/win32.h"

namespace ztcli {

// GetFileInformationByHandle: Windows' stat has no inode (st_ino is 0).
bool file_id(const std::string &path, FileId &id) {
  HANDLE h = INVALID_HANDLE_VALUE;
  try {
    h = CreateFileW(zt::win32::wide_path(path).c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  } catch (...) {
    return false;  // not UTF-8: the open that follows says so
  }
  if (h == INVALID_HANDLE_VALUE) return false;
  BY_HANDLE_FILE_INFORMATION info;
  const bool ok = GetFileInformationByHandle(h, &info) != 0;
  CloseHandle(h);
  if (!ok) return false;
  id.dev = info.dwVolumeSerialNumber;
  id.ino = (uint64_t{info.nFileIndexHigh} << 32) | info.nFileIndexLow;
  id.links = info.nNumberOfLinks;
  return true;
}

void prepare_process() {
  // zt cat writes component bytes: no "\n" to "\r\n" translation. Messages
  // too end in "\n" alone, as on POSIX: no raw carriage return reaches a
  // terminal from zt (names are escaped, tools/zt/terminal_text.h).
  ::_setmode(::_fileno(stdout), _O_BINARY);
  ::_setmode(::_fileno(stderr), _O_BINARY);
  // Inputs read with ReadFile rather than mapped: Windows cannot replace a
  // mapped file, which zt append and zt remove do to their input.
  read_options().pread = true;
}

// No RLIMIT_DATA: a job object could cap the commit charge, but that is not
// done yet. Refused rather than ignored (docs/cross.md).
int limit_memory(uint64_t) {
  std::fprintf(stderr, "zt: --max-memory is not supported on Windows (no RLIMIT_DATA)\n");
  return kUsage;
}

// MoveFileExW fails with ERROR_ACCESS_DENIED over a file that is open, even
// one shared for deletion.
bool can_replace_open_file() {
  return false;
}

}  // namespace ztcli
