// The encoding profile zt.zstd-seekable/1 (spec/profiles/zt.zstd-seekable-1.md),
// reading side. The seek table at the end of the stream is read and checked
// against the profile before any frame is touched: a skippable frame of the
// seekable format, frames that tile the stream exactly, each frame's
// content ≤ 16 MiB, all but the last of one size, the sum exactly the part's
// decoded_length. Frames are then decoded one at a time on demand, each
// checked (one zstd frame, its content size as the table says, a content
// checksum, which zstd verifies): a range of the decoded stream costs the
// frames it touches, never the whole part. Memory: the table (8 bytes a
// frame; the table itself occupies ≥ 8 bytes a frame of the stream, so it
// is bounded by the stored part) and one frame.
#pragma once

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace zt::v2 {

class ZstdSeekableDecoder {
 public:
  static constexpr uint64_t kMaxFrameContent = uint64_t{16} << 20;
  // Reads `len` bytes at `offset` of the encoded stream into `dst`.
  using ReadAt = std::function<void(uint64_t offset, size_t len, uint8_t *dst)>;

  // Reads and checks the seek table of a stream of `stored_length` bytes
  // that must decode to exactly `decoded_length` bytes. `ctx` names the part
  // in messages. Throws Rule::Encoding (ZT_E_CORRUPT).
  ZstdSeekableDecoder(ReadAt read, uint64_t stored_length, uint64_t decoded_length, std::string ctx);
  ~ZstdSeekableDecoder();
  ZstdSeekableDecoder(const ZstdSeekableDecoder &) = delete;
  ZstdSeekableDecoder &operator=(const ZstdSeekableDecoder &) = delete;

  // Decoded bytes [offset, offset + len) into dst; decodes only the frames
  // the range touches. Throws Rule::Encoding on a damaged frame, ZT_E_RANGE
  // for a range past decoded_length.
  void read(uint64_t offset, size_t len, uint8_t *dst);

  // Every decoded byte in order, a frame at a time (digests, content
  // checks): fn gets each frame's bytes.
  void each(const std::function<void(const uint8_t *, size_t)> &fn);

  size_t frames() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  uint64_t frame_content() const { return frame_content_; }
  // Frames decoded so far (tests and the bench count it).
  uint64_t frames_decoded() const { return frames_decoded_; }

 private:
  void decode_frame(size_t k, uint8_t *dst, size_t n);
  // Frame k decoded into out_ (kept: runs of a slice reuse it).
  const uint8_t *cached_frame(size_t k);
  size_t frame_size(size_t k) const { return static_cast<size_t>(k + 1 == frames() ? last_content_ : frame_content_); }

  ReadAt read_;
  uint64_t decoded_length_;
  std::string ctx_;
  uint64_t frame_content_ = 0;     // decoded bytes of every frame but the last
  std::vector<uint64_t> offsets_;  // frames + 1 compressed offsets
  uint64_t last_content_ = 0;
  ZSTD_DCtx *dctx_ = nullptr;
  std::vector<uint8_t> in_, out_;
  uint64_t frames_decoded_ = 0;
  size_t cached_ = SIZE_MAX;  // the frame out_ holds
};

}  // namespace zt::v2
