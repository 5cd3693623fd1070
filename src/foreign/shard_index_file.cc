// The index of a sharded safetensors checkpoint (model.safetensors.index.json:
// {"metadata": {...}, "weight_map": {tensor: shard file}}), read with the
// care of any foreign input: bounded size, and the library's index parser
// (src/set/shard_index.h: bounded nesting, no repeated key, shard locations
// that stay inside the index's folder, as zt_open_set requires of .zt sets).
#ifdef _WIN32
#include <io.h>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "foreign.h"
#include "set/shard_index.h"
#include "util/error.h"
#ifdef _WIN32
#include "platform/win32.h"
#else
#include "util/regular_file.h"
#endif

namespace zt::foreign {
namespace {

#ifdef _WIN32
// Windows: opened through the library's platform layer, which refuses
// anything but a regular file (a device, a folder) with a message.
std::string read_text(const std::string &path, uint64_t limit) {
  uint64_t size = 0;
  int fd = -1;
  try {
    fd = zt::win32::open_read(path, &size);
    if (size > limit)
      throw format_error("'" + path + "': " + std::to_string(size) + " bytes exceed the index limit of " +
                         std::to_string(limit));
    std::string text(static_cast<size_t>(size), '\0');
    if (size) zt::win32::pread_all(fd, path, 0, text.data(), text.size());
    ::_close(fd);
    return text;
  } catch (const zt::Error &e) {
    if (fd >= 0) ::_close(fd);
    throw format_error(e.what());
  } catch (...) {
    if (fd >= 0) ::_close(fd);
    throw;
  }
}
#else
std::string read_text(const std::string &path, uint64_t limit) {
  // Opened without blocking and refused unless a regular file: a FIFO
  // given as an index must not hang the command (util/regular_file.h).
  struct stat st;
  const char *kind = nullptr;
  const int fd = zt::open_regular_file(AT_FDCWD, path.c_str(), 0, &st, &kind);
  if (fd < 0 && kind) throw format_error("'" + path + "' is " + kind + ", not a regular file");
  if (fd < 0) throw format_error("cannot open '" + path + "': " + std::strerror(errno));
  if (static_cast<uint64_t>(st.st_size) > limit) {
    ::close(fd);
    throw format_error("'" + path + "': " + std::to_string(st.st_size) + " bytes exceed the index limit of " +
                       std::to_string(limit));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw format_error("'" + path + "': read failed");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return text;
}
#endif

}  // namespace

ShardIndexFile read_shard_index(const std::string &path, const Limits &limits) {
  const std::string text = read_text(path, limits.max_header);
  zt::ShardIndex idx;
  try {
    // The library's parser (the one zt_open_set uses): one SAX pass,
    // O(n log n), a repeated key refused, locations checked.
    idx = zt::parse_shard_index(text, "'" + path + "'", SIZE_MAX);
  } catch (const zt::Error &e) {
    throw format_error(e.what());
  }
  ShardIndexFile r;
  r.metadata_json = std::move(idx.metadata_json);
  r.weight_map.reserve(idx.tensors.size());
  for (auto &[name, shard] : idx.tensors) r.weight_map.emplace_back(std::move(name), idx.shards[shard]);
  return r;
}

}  // namespace zt::foreign
