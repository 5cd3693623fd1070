// Checks that keep a command from destroying what it reads: an output that
// is one of the inputs (the same inode, whatever the spelling of the path),
// and in-place rewrites of a file with several hard links.
#pragma once

#include <string>
#include <vector>

namespace ztcli {

// kOk, or (after a message naming both paths) kUsage when `out` is the same
// file as one of `inputs`: writing it would replace the input before or
// while it is read, and the output would hold less than the input did.
int refuse_output_is_input(const char *cmd, const std::string &out, const std::vector<std::string> &inputs);

// kOk, or kFailure when `path` has more than one hard link: an atomic
// rewrite renames a new file over this name only, so the other names would
// keep the old content. Symlinks are fine (the rename follows them).
int refuse_hard_linked(const char *cmd, const std::string &path);

}  // namespace ztcli
