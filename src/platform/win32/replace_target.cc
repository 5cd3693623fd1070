// Windows counterpart of replace_target.cc. The new file replaces the path
// itself: Windows symbolic links (which need a privilege to create) are not
// followed, and the file's ACL is the folder's default, as for any new file
// (docs/cross.md, "Windows").
#include "platform/replace_target.h"

#include "platform/win32/win32.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {

ReplaceTarget resolve_replace_target(const std::string &path) {
  ReplaceTarget t;
  t.path = path;
  switch (win32::path_kind(path)) {
    case 0:
      return t;  // a new file
    case 1:
      t.exists = true;
      return t;
    case 2:
      fail(ZT_E_IO, "cannot write '" + path + "': it is a directory");
    default:
      fail(ZT_E_IO, "cannot write '" + path + "': not a regular file (a device cannot be replaced)");
  }
}

void apply_replace_metadata(int, const ReplaceTarget &) {}

}  // namespace zt
