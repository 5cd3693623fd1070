// The platform seam for files beneath a folder, never outside it: a local set's shards (capi/set_c.cc)
// and an ONNX model's external data (foreign/onnx.cc) are opened here, one
// path component at a time, refusing symbolic links (docs/sharding.md).
// Locations must first pass check_shard_location (set/shard_index.h).
#pragma once

#include <string>

namespace zt {

// The folder holding `index_path` (a file in it). POSIX
// (src/platform/posix/open_beneath.cc): opened once, and every file is
// opened beneath it with openat, never through a path string. Windows
// (src/platform/win32/open_beneath.cc): the folder as a path; each part of
// a location is checked before the file is opened by its full path
// (docs/cross.md, "Windows").
struct IndexFolder {
  int fd = -1;        // POSIX
  std::string dir;    // Windows
  std::string shown;  // the folder as given, for messages
  explicit IndexFolder(const std::string &index_path);
  ~IndexFolder();
  IndexFolder(const IndexFolder &) = delete;
  IndexFolder &operator=(const IndexFolder &) = delete;
};

// Opens a checked location (relative, no "." or ".." part) beneath the
// folder, one component at a time, each with O_NOFOLLOW: a symlinked
// subfolder or file, which could lead anywhere, is refused. The file is
// opened without blocking and must be a regular file. Returns its
// descriptor; throws zt::Error (ZT_E_IO) naming `ctx`.
int open_beneath(const IndexFolder &folder, const std::string &location, const std::string &ctx);

}  // namespace zt
