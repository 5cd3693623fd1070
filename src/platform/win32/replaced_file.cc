// Windows counterpart of replaced_file.cc: MoveFileExW frees the replaced
// file's clusters itself, and a handle kept open on it would make the
// rename fail (a sharing violation), so nothing is held or deferred.
#include "platform/replaced_file.h"

namespace zt {

ReplacedFile::ReplacedFile(const std::string &) noexcept {}

ReplacedFile::~ReplacedFile() = default;

int ReplacedFile::in_flight() {
  return 0;
}

void ReplacedFile::release() noexcept {}

}  // namespace zt
