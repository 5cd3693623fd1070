// The Windows side of platform/new_file.h. The new file is a named
// temporary beside the destination ("<destination>.zt-tmp-<pid>-XXXXXX",
// created with CREATE_NEW), renamed over it on commit with MoveFileExW
// (MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) after
// FlushFileBuffers when sync is asked. If the destination is open in a
// program that does not let it be replaced, the rename fails, the error
// names the file, the destination keeps its old bytes and the temporary is
// removed. There is no O_TMPFILE on Windows, and FILE_FLAG_DELETE_ON_CLOSE
// cannot be undone for a rename: a process killed while writing leaves its
// temporary behind (docs/cross.md, "Windows").
#include "platform/new_file.h"

#include "platform/win32/win32.h"

namespace zt {
namespace platform {

int create_temp_beside(const ReplaceTarget &target, const std::string &, const char *tag, std::string &temp_path) {
  return win32::create_temp(target.path, tag, temp_path);
}

void write_two(int fd, const void *a, size_t na, const void *b, size_t nb, const std::string &what) {
  if (na) win32::write_all(fd, a, na, what);
  if (nb) win32::write_all(fd, b, nb, what);
}

void start_writeback(int, uint64_t, uint64_t) noexcept {}

void flush_to_disk(int fd, const std::string &what) {
  win32::flush_to_disk(fd, what);
}

void name_temp(int, const std::string &, const char *, std::string &) {}  // always named

// MoveFileExW frees the replaced file's clusters itself (and a handle kept
// on it would make the rename fail), so nothing is deferred.
void replace_file(const std::string &temp, const std::string &target, const std::string &, bool *in_background) {
  win32::replace_file(temp, target);
  *in_background = false;
}

// MOVEFILE_WRITE_THROUGH made the rename durable already.
void sync_folder_of(const std::string &) noexcept {}

void remove_temp(const std::string &temp_path) noexcept {
  win32::remove_file(temp_path);
}

}  // namespace platform
}  // namespace zt
