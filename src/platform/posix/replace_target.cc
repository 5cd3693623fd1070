#include "platform/replace_target.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace {

constexpr int kMaxHops = 40;  // as the kernel's MAXSYMLINKS

std::string read_link(const std::string &link) {
  std::vector<char> buf(256);
  for (;;) {
    ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
    if (n < 0) fail(ZT_E_IO, "cannot read the symlink '" + link + "': " + std::strerror(errno));
    if (static_cast<size_t>(n) < buf.size()) return std::string(buf.data(), static_cast<size_t>(n));
    buf.resize(buf.size() * 2);
  }
}

// A relative link target is relative to the folder holding the link.
std::string join_link(const std::string &link, const std::string &target) {
  if (!target.empty() && target[0] == '/') return target;
  size_t slash = link.rfind('/');
  return slash == std::string::npos ? target : link.substr(0, slash + 1) + target;
}

}  // namespace

ReplaceTarget resolve_replace_target(const std::string &path) {
  ReplaceTarget t;
  t.path = path;
  for (int hop = 0;; ++hop) {
    struct stat st;
    if (::lstat(t.path.c_str(), &st) != 0) {
      // A dangling link is refused, not followed: it would create a file
      // wherever the link points (someone else's folder, a name they chose).
      if (errno == ENOENT && hop > 0)
        fail(ZT_E_IO, "cannot write '" + path + "': it is a symbolic link to '" + t.path +
                          "', which does not exist (a dangling link is not followed: remove it, or create its "
                          "target first)");
      if (errno == ENOENT) return t;  // a new file
      fail(ZT_E_IO, "cannot stat '" + t.path + "': " + std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      if (hop == kMaxHops) fail(ZT_E_IO, "cannot write '" + path + "': too many levels of symbolic links");
      t.path = join_link(t.path, read_link(t.path));
      continue;
    }
    if (S_ISDIR(st.st_mode)) fail(ZT_E_IO, "cannot write '" + path + "': it is a directory");
    if (!S_ISREG(st.st_mode))
      fail(ZT_E_IO, "cannot write '" + path + "': not a regular file (a device, FIFO or socket cannot be replaced)");
    t.exists = true;
    t.mode = st.st_mode & 07777;
    t.uid = st.st_uid;
    t.gid = st.st_gid;
    return t;
  }
}

uint32_t temp_create_mode(const ReplaceTarget &target) {
  return target.exists ? 0600 : 0666;
}

void apply_replace_metadata(int fd, const ReplaceTarget &target) {
  // A new file was created 0666 and the kernel applied the umask: nothing
  // to change (and the umask is never read, see platform/posix/temp_file.h).
  if (!target.exists) return;
  // Owner first: chown clears set-id bits, which fchmod then restores. Only
  // root may change the owner, and a group only to one of the caller's: a
  // refusal keeps the caller's ids, as any editor's save would.
  if (::fchown(fd, target.uid, target.gid) != 0) (void)::fchown(fd, static_cast<uid_t>(-1), target.gid);
  ::fchmod(fd, target.mode);
}

}  // namespace zt
