// The encoding profile zt.zstd-seekable/1 (spec/profiles/zt.zstd-seekable-1.md),
// writing side: independent zstd frames of kFrameContent decoded bytes (the
// last may be shorter), each with its content size and a content checksum,
// then the seek table as a skippable frame. Bytes are fed in any pieces;
// memory is one frame's input and output.
#pragma once

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace zt::v2 {

class ZstdSeekableEncoder {
 public:
  // 1 MiB, as the original writer (the profile allows up to 16 MiB).
  static constexpr size_t kFrameContent = size_t{1} << 20;
  using Emit = std::function<void(const uint8_t *, size_t)>;

  explicit ZstdSeekableEncoder(int level);
  ~ZstdSeekableEncoder();
  ZstdSeekableEncoder(const ZstdSeekableEncoder &) = delete;
  ZstdSeekableEncoder &operator=(const ZstdSeekableEncoder &) = delete;

  void update(const void *data, size_t len, const Emit &emit);
  // The last frame and the seek table.
  void finish(const Emit &emit);

 private:
  void frame(const uint8_t *p, size_t n, const Emit &emit);

  ZSTD_CCtx *cctx_;
  std::vector<uint8_t> in_, out_;
  std::vector<std::pair<uint32_t, uint32_t>> entries_;  // (compressed, decoded) per frame
};

}  // namespace zt::v2
