#include "output_guard.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <sys/stat.h>
#endif

#include <cstdint>
#include <cstdio>

#include "cli.h"
#include "terminal_text.h"
#ifdef _WIN32
#include "platform/win32/win32.h"
#endif

namespace ztcli {
namespace {

// What names a file, and how many names it has.
struct FileId {
  uint64_t dev = 0, ino = 0, links = 0;
};

#ifdef _WIN32
// Windows' stat has no inode (st_ino is 0): the volume serial number and
// file index of GetFileInformationByHandle name a file instead.
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
#else
bool file_id(const std::string &path, FileId &id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  id.links = static_cast<uint64_t>(st.st_nlink);
  return true;
}
#endif

}  // namespace

int refuse_output_is_input(const char *cmd, const std::string &out, const std::vector<std::string> &inputs) {
  FileId o;
  if (is_url(out) || !file_id(out, o)) return kOk;  // a new file cannot be an input
  for (const auto &in : inputs) {
    FileId i;
    if (is_url(in)) continue;  // read remotely: never the local output
    if (file_id(in, i) && i.dev == o.dev && i.ino == o.ino) {
      std::fprintf(stderr,
                   "zt %s: the output '%s' is the input '%s' (the same file); writing it would replace the "
                   "input: choose another output path (nothing written)\n",
                   cmd, shown(out).c_str(), shown(in).c_str());
      return kUsage;
    }
  }
  return kOk;
}

int refuse_hard_linked(const char *cmd, const std::string &path) {
  FileId id;
  if (!file_id(path, id) || id.links <= 1) return kOk;
  std::fprintf(stderr,
               "zt %s: '%s' has %ju hard links; rewriting it would give only this name the new content while "
               "the other names keep the old one. Write the result elsewhere (zt merge ... -o NEW.zt) and "
               "replace the links yourself (nothing changed)\n",
               cmd, path.c_str(), static_cast<uintmax_t>(id.links));
  return kFailure;
}

}  // namespace ztcli
