#include "container/layout.h"

#include <cstring>

#include "util/error.h"
#include "v2/footer.h"
#include "v2/rule.h"

namespace zt {
namespace {

uint64_t load_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Only ever applied to bytes of a file whose header magic matched.
std::string quote_magic(const uint8_t *m) {
  std::string s;
  for (int i = 0; i < 8; ++i) {
    if (m[i] >= 0x20 && m[i] < 0x7f) {
      s += static_cast<char>(m[i]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", m[i]);
      s += buf;
    }
  }
  return "\"" + s + "\"";
}

// The manifest must fit between the magic and the fixed tail, and under the
// limit, before a single byte of it is read.
void check_manifest_size(uint64_t msize, uint64_t room, uint64_t limit, const std::string &path) {
  if (msize > limit)
    fail(ZT_E_MANIFEST_LIMIT, "'" + path + "': manifest size " + std::to_string(msize) + " exceeds the limit of " +
                                  std::to_string(limit) + " bytes");
  if (msize > room)
    fail(ZT_E_MANIFEST_SIZE, "'" + path + "': manifest size " + std::to_string(msize) +
                                 " is larger than the file allows (" + std::to_string(room) + ")");
}

}  // namespace

ManifestLocation locate_manifest(const Source &src, uint64_t max_manifest_size) {
  const uint64_t size = src.size();
  const std::string &path = src.path();
  if (size < 8)
    fail(ZT_E_TRUNCATED, "'" + path + "': file is " + std::to_string(size) +
                             " bytes, shorter than the 8-byte magic (v2: " +
                             v2::rejected(v2::Rule::FileTooSmall, "shorter than 48 bytes") + ")");
  std::vector<uint8_t> scratch;
  const uint8_t *head = src.read_meta(0, 8, scratch);
  if (v2::is_magic(head)) {
    v2::Footer f = v2::read_footer(src, max_manifest_size);
    ManifestLocation loc{Container::V2, f.manifest_offset, f.manifest_length};
    loc.hash = f.manifest_hash;
    loc.data_shard = f.data_shard;
    return loc;
  }
  if (std::memcmp(head, kMagicV1, 8) == 0) {
    if (size < 24)
      fail(ZT_E_TRUNCATED,
           "'" + path + "': file is " + std::to_string(size) + " bytes, shorter than magic + size + footer (24)");
    const uint8_t *tail = src.read_meta(size - 16, 16, scratch);  // head is not used past here
    if (std::memcmp(tail + 8, kMagicV1, 8) != 0)
      fail(ZT_E_FOOTER, "'" + path + "': footer magic at offset " + std::to_string(size - 8) + " is " +
                            quote_magic(tail + 8) + ", expected \"ZTEN1000\" (file truncated or damaged)");
    uint64_t msize = load_le64(tail);
    check_manifest_size(msize, size - 24, max_manifest_size, path);
    return {Container::V1, size - 16 - msize, msize};
  }
  if (std::memcmp(head, kMagicV0, 8) == 0) {
    if (size < 16)
      fail(ZT_E_TRUNCATED,
           "'" + path + "': legacy file is " + std::to_string(size) + " bytes, shorter than magic + size (16)");
    const uint8_t *tail = src.read_meta(size - 8, 8, scratch);
    uint64_t msize = load_le64(tail);
    check_manifest_size(msize, size - 16, max_manifest_size, path);
    return {Container::V0, size - 8 - msize, msize};
  }
  // Not one byte of the file is quoted: it is not a zTensor file, and a
  // message must not become a way to read someone else's file (a set's
  // shard, say, that turned out to be a private key).
  // A v2 file whose first bytes were damaged still ends with the v2 magic:
  // name the v2 rule it breaks (the footer alone is not quoted either).
  if (size >= v2::kMinFileSize && v2::is_magic(src.read_meta(size - 8, 8, scratch)))
    v2::reject(v2::Rule::HeaderMagic, "'" + path + "': ends with the v2 magic, but does not start with it");
  if (size < v2::kMinFileSize)
    fail(ZT_E_FORMAT, "'" + path +
                          "': does not start with the magic \"ZTEN1000\", \"ZTEN0001\" or \"\\x89ZT2\\r\\n\\x1a\\n\": "
                          "not a zTensor file (and, at " +
                          std::to_string(size) + " bytes, too short for a v2 one: " +
                          v2::rejected(v2::Rule::FileTooSmall, "shorter than 48 bytes") + ")");
  fail(ZT_E_FORMAT, "'" + path +
                        "': does not start with the magic \"ZTEN1000\", \"ZTEN0001\" or \"\\x89ZT2\\r\\n\\x1a\\n\": "
                        "not a zTensor file");
}

}  // namespace zt
