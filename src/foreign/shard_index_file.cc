// The index of a sharded safetensors checkpoint (model.safetensors.index.json:
// {"metadata": {...}, "weight_map": {tensor: shard file}}), read with the
// care of any foreign input: bounded size, and the library's index parser
// (src/set/shard_index.h: bounded nesting, no repeated key, shard locations
// that stay inside the index's folder, as zt_open_set requires of .zt sets).
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "foreign.h"
#include "platform/file.h"
#include "set/shard_index.h"
#include "util/error.h"

namespace zt::foreign {
namespace {

// Opened through the library's platform seam, which refuses anything but a
// regular file (a FIFO given as an index must not hang the command; a
// device, a folder) with a message.
std::string read_text(const std::string &path, uint64_t limit) {
  try {
    const zt::platform::InputFile file(path);
    if (file.size() > limit)
      throw format_error("'" + path + "': " + std::to_string(file.size()) + " bytes exceed the index limit of " +
                         std::to_string(limit));
    std::string text(static_cast<size_t>(file.size()), '\0');
    if (!text.empty()) zt::platform::read_at(file.get(), "'" + path + "'", 0, &text[0], text.size());
    return text;
  } catch (const zt::Error &e) {
    throw format_error(e.what());
  }
}

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
