#include "set/open_beneath.h"

#ifdef _WIN32
#include <io.h>
#include <windows.h>

#include "platform/win32/win32.h"
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/posix/regular_file.h"
#endif

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace zt {

#ifdef _WIN32
// Windows: the folder holding a local index, as a path. There is no openat:
// each part of a shard's location is checked before the shard is opened by
// its full path, so a symbolic link or junction (a reparse point) in it is
// refused as on POSIX; a link swapped in between the check and the open is
// not caught (docs/cross.md, "Windows").
IndexFolder::IndexFolder(const std::string &index_path) {
  const size_t slash = index_path.find_last_of("/\\");
  dir = slash == std::string::npos ? "." : index_path.substr(0, slash == 0 ? 1 : slash);
  shown = printable(dir);
  if (win32::path_kind(dir) != 2) fail(ZT_E_IO, "index '" + printable(index_path) + "': cannot open its folder");
}

int open_beneath(const IndexFolder &folder, const std::string &location, const std::string &ctx) {
  const std::string rule =
      " (rule: a local set's shards and their folders are real files and folders inside the "
      "index's folder, not symbolic links)";
  size_t start = 0;
  for (;;) {
    const size_t slash = location.find('/', start);
    const std::string so_far = location.substr(0, slash);
    const std::string full = folder.dir + "/" + so_far;
    const DWORD attrs = GetFileAttributesW(win32::wide_path(full).c_str());
    if (attrs == INVALID_FILE_ATTRIBUTES)
      fail(ZT_E_IO, ctx + ": cannot open '" + printable(so_far) + "' in '" + folder.shown +
                        "': " + win32::error_text(GetLastError()));
    if (attrs & FILE_ATTRIBUTE_REPARSE_POINT)
      fail(ZT_E_IO, ctx + ": '" + printable(so_far) + "' is a symbolic link" + rule);
    if (slash == std::string::npos) {
      uint64_t size = 0;
      try {
        return win32::open_read(full, &size);
      } catch (const Error &e) {
        fail(e.status(), ctx + ": " + e.what());
      }
    }
    start = slash + 1;
  }
}

#else
// The folder holding a local index, opened once: every shard is opened
// beneath it (open_local_member), never through a path string.
IndexFolder::IndexFolder(const std::string &index_path) {
  const size_t slash = index_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : index_path.substr(0, slash);
  shown = printable(dir);
  fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(ZT_E_IO, "index '" + printable(index_path) + "': cannot open its folder: " + std::strerror(errno));
}
IndexFolder::~IndexFolder() {
  ::close(fd);
}

// Opens a checked shard location (relative, no "." or ".." part) beneath
// the index's folder, one component at a time, each with O_NOFOLLOW: a
// symlinked subfolder or shard, which could lead anywhere (another user's
// files, /proc), is refused, and nothing is resolved through a path string
// that could change between check and use. The shard itself is opened
// without blocking and must be a regular file. Returns its descriptor.
int open_beneath(const IndexFolder &folder, const std::string &location, const std::string &ctx) {
  const std::string rule =
      " (rule: a local set's shards and their folders are real files and folders inside the "
      "index's folder, not symbolic links)";
  int dir = folder.fd;
  auto close_dir = [&] {
    if (dir != folder.fd) ::close(dir);
  };
  size_t start = 0;
  for (;;) {
    const size_t slash = location.find('/', start);
    const std::string part = location.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    const std::string so_far = location.substr(0, slash);
    auto refuse = [&](int err) {
      struct stat st;
      const bool link =
          err == ELOOP || (::fstatat(dir, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
      close_dir();
      if (link) fail(ZT_E_IO, ctx + ": '" + printable(so_far) + "' is a symbolic link" + rule);
      fail(ZT_E_IO, ctx + ": cannot open '" + printable(so_far) + "' in '" + folder.shown + "': " + std::strerror(err));
    };
    if (slash == std::string::npos) {
      struct stat st;
      const char *kind = nullptr;
      const int fd = open_regular_file(dir, part.c_str(), O_NOFOLLOW, &st, &kind);
      if (fd < 0 && kind) {
        close_dir();
        fail(ZT_E_IO, ctx + ": '" + printable(so_far) + "' is " + kind + ", not a regular file");
      }
      if (fd < 0) refuse(errno);
      close_dir();
      return fd;
    }
    const int next = ::openat(dir, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (next < 0) refuse(errno);
    close_dir();
    dir = next;
    start = slash + 1;
  }
}

#endif

}  // namespace zt
