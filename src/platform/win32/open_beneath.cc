// The Windows side of platform/open_beneath.h.
#include "platform/open_beneath.h"

#include <windows.h>

#include "platform/win32/win32.h"
#include "util/error.h"

namespace zt {

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

IndexFolder::~IndexFolder() = default;

}  // namespace zt
