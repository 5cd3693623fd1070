// The checks every platform's FileView makes before it maps or reads a file.
#include <limits>
#include <string>

#include "platform/file.h"
#include "util/error.h"

namespace zt {
namespace platform {

size_t checked_view_size(const std::string &path, uint64_t size, uint64_t expected_size) {
  if (expected_size != FileView::kAnySize && size != expected_size)
    fail(ZT_E_CHANGED, "'" + path + "' changed size while being opened (" + std::to_string(expected_size) + " -> " +
                           std::to_string(size) + " bytes)");
  if (size > std::numeric_limits<size_t>::max())
    fail(ZT_E_LIMIT, "'" + path + "' (" + std::to_string(size) + " bytes) is larger than this " +
                         std::to_string(8 * sizeof(size_t)) + "-bit process can address");
  return static_cast<size_t>(size);
}

}  // namespace platform
}  // namespace zt
