// What the zt tool does differently on POSIX and on Windows, behind one
// header (tools/zt/platform_posix.cc, tools/zt/platform_win32.cc; Meson
// compiles one). The library's own seam is src/platform/ (docs/architecture.md).
#pragma once

#include <cstdint>
#include <string>

namespace ztcli {

// What names a file, and how many names it has: device and inode, or on
// Windows (whose stat has no inode) the volume serial number and file index.
struct FileId {
  uint64_t dev = 0, ino = 0, links = 0;
};
// False when the file cannot be asked (it does not exist, say).
bool file_id(const std::string &path, FileId &id);

// At start: Windows writes stdout and stderr as bytes (no "\n" to "\r\n")
// and reads inputs with ReadFile rather than mapping them (a mapped file
// cannot be replaced there). Nothing on POSIX.
void prepare_process();

// --max-memory: caps the process's data (RLIMIT_DATA; never above the hard
// limit) and makes inputs read with pread (a private map counts as data).
// Returns kOk, or an exit code after a message (refused on Windows).
int limit_memory(uint64_t limit);

// Whether a file being read can be replaced (zt append and zt remove
// rewrite their input): not on Windows.
bool can_replace_open_file();

}  // namespace ztcli
