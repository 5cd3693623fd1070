#include "v2/footer.h"

#include <cstring>
#include <vector>

#include "util/error.h"
#include "v2/rule.h"

namespace zt::v2 {
namespace {

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t le32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

bool is_magic(const uint8_t *bytes8) {
  return std::memcmp(bytes8, kMagic, 8) == 0;
}

Footer read_footer(const Source &src, uint64_t limit) {
  const std::string pre = "'" + src.path() + "': ";
  const uint64_t size = src.size();
  auto bad = [&](Rule r, const std::string &m, zt_status s = ZT_OK) { reject(r, pre + m, s); };
  if (size < kMinFileSize)
    bad(Rule::FileTooSmall, "file is " + std::to_string(size) + " bytes, shorter than magic + footer (48)");
  std::vector<uint8_t> scratch;
  if (!is_magic(src.read_meta(0, 8, scratch))) bad(Rule::HeaderMagic, "the first 8 bytes are not the v2 magic");
  const uint8_t *f = src.read_meta(size - kFooterSize, kFooterSize, scratch);
  if (!is_magic(f + 32))
    bad(Rule::FooterMagic,
        "footer magic at offset " + std::to_string(size - 8) + " is wrong (file truncated or damaged)");
  const uint32_t version = le32(f + 24);
  if (version != kVersion)
    bad(Rule::Version, "footer version is " + std::to_string(version) + "; this library reads version 2");
  Footer out;
  out.manifest_offset = le64(f);
  out.manifest_length = le64(f + 8);
  out.manifest_hash = le64(f + 16);
  out.data_end = size - kFooterSize;
  if (out.manifest_length == 0) {
    if (out.manifest_offset != 0 || out.manifest_hash != 0)
      bad(Rule::ManifestBounds, "manifest_length is 0 (a data shard), but manifest_offset or manifest_hash is not");
    out.data_shard = true;
    return out;
  }
  if (out.manifest_length > kMaxManifestSize)
    bad(Rule::ManifestTooLarge, "manifest_length " + std::to_string(out.manifest_length) + " exceeds the 1 GiB cap",
        ZT_E_MANIFEST_LIMIT);
  if (out.manifest_length > limit)
    fail(ZT_E_MANIFEST_LIMIT, pre + "manifest size " + std::to_string(out.manifest_length) + " exceeds the limit of " +
                                  std::to_string(limit) + " bytes");
  if (out.manifest_offset % kAlignFloor != 0 || out.manifest_offset < kAlignFloor)
    bad(Rule::BlobAlignment, "manifest blob at offset " + std::to_string(out.manifest_offset) +
                                 " is not a multiple of 4096 at or after 4096");
  if (out.manifest_offset > out.data_end || out.manifest_length > out.data_end - out.manifest_offset)
    bad(Rule::ManifestBounds, "manifest [" + std::to_string(out.manifest_offset) + ", +" +
                                  std::to_string(out.manifest_length) + ") lies outside the data region (ends at " +
                                  std::to_string(out.data_end) + ")");
  return out;
}

}  // namespace zt::v2
