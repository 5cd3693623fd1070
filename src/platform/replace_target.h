// Where a new file really lands, and what it inherits, when it replaces an
// existing path. Writing a temporary and renaming it over `path` would
// replace a symlink by a regular file (leaving its target stale) and reset
// the file's permissions and owner; instead the rename goes over the file
// the link points at, and the new file takes the old one's mode and owner.
#pragma once

#include <cstdint>
#include <string>

namespace zt {

struct ReplaceTarget {
  std::string path;     // the file to rename over: `path` with symlinks followed
  bool exists = false;  // a regular file is there now
  // POSIX only (Windows gives the file its folder's default ACL):
  uint32_t mode = 0;  // its permission bits (07777), when it exists
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// Follows symlinks (up to 40 hops: a loop is refused with ZT_E_IO), but
// refuses a dangling one (ZT_E_IO) rather than create its target. Refuses a
// directory. Throws zt::Error.
ReplaceTarget resolve_replace_target(const std::string &path);

// The mode to create the temporary with: 0600 when it replaces a file
// (apply_replace_metadata then gives it that file's mode), 0666 for a new
// file, which the kernel cuts by the umask as it creates it.
// POSIX only.
uint32_t temp_create_mode(const ReplaceTarget &target);

// Gives the open temporary `fd` the permissions of the file it replaces:
// its mode and owner (best effort for the owner: only root may give a file
// away). Nothing for a new file (see temp_create_mode).
void apply_replace_metadata(int fd, const ReplaceTarget &target);

}  // namespace zt
