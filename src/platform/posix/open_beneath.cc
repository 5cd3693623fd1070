// The POSIX side of platform/open_beneath.h.
#include "platform/open_beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/posix/regular_file.h"
#include "util/error.h"

namespace zt {

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

}  // namespace zt
