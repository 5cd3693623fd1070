// Encodings: raw and zstd (libzstd), and byte swapping for legacy
// big-endian data. Decoding always produces exactly the declared size or
// fails; contexts are reused per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zt {

// Decodes a zstd stream (one or more frames) into dst, which must receive
// exactly `expected` bytes. ZT_E_DECODED_SIZE if it yields more or fewer,
// ZT_E_CORRUPT if the stream is damaged. `ctx` names the component.
void zstd_decode_exact(const void *src, size_t src_len, void *dst, size_t expected, const std::string &ctx);

// Decodes a zstd stream of unknown decoded size, refusing to grow beyond
// `limit` bytes (ZT_E_LIMIT).
std::vector<uint8_t> zstd_decode_bounded(const void *src, size_t src_len, uint64_t limit, const std::string &ctx);

// Decodes only bytes [begin, begin+count) of the stream into dst, stopping
// once they are produced.
void zstd_decode_range(const void *src, size_t src_len, void *dst, uint64_t begin, size_t count,
                       const std::string &ctx);

// Decodes from the start of the stream, handing each decoded piece to
// sink(ptr, n) until it returns false; memory is one output buffer plus
// libzstd's window, never the decoded whole. Damage past the point where
// sink stopped is not seen. Returns the number of bytes decoded.
uint64_t zstd_decode_until(const void *src, size_t src_len, const std::string &ctx,
                           const std::function<bool(const uint8_t *, size_t)> &sink);

// Decodes the whole stream, calling sink(ptr, n) on each piece; returns the
// total. Refuses to go past `limit` bytes (ZT_E_DECODED_SIZE).
uint64_t zstd_decode_each(const void *src, size_t src_len, uint64_t limit, const std::string &ctx,
                          const std::function<void(const uint8_t *, size_t)> &sink);

// The decoded size a stream states in its frame header, when the stream is
// exactly one frame whose header records it (zstd's content size field);
// nullopt otherwise (several frames, no size recorded, damage). Reads only
// the frame and block headers. The size is a claim: a decode still checks
// it.
std::optional<uint64_t> zstd_single_frame_content_size(const void *src, size_t src_len);

// Compresses a whole buffer into one frame, handing the output to sink in
// pieces; `threads` > 1 lets libzstd use worker threads.
void zstd_compress_each(const void *src, size_t len, int level, unsigned threads,
                        const std::function<void(const uint8_t *, size_t)> &sink);

// Streaming compression: feed pieces, collect output as it is produced.
class ZstdStream {
 public:
  ZstdStream(int level, unsigned threads);
  ~ZstdStream();
  ZstdStream(const ZstdStream &) = delete;
  ZstdStream &operator=(const ZstdStream &) = delete;
  using Sink = std::function<void(const uint8_t *, size_t)>;
  // Hands the compressed bytes produced (possibly none) to sink, in pieces.
  void update(const void *src, size_t len, const Sink &sink);
  void finish(const Sink &sink);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reverses the bytes of each `elem_size`-byte element in place.
void byteswap_inplace(void *data, size_t len, size_t elem_size);

}  // namespace zt
