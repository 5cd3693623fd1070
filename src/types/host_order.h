// Elements cross the API in the host's byte order and are stored
// little-endian. On a big-endian host the writer swaps what a caller hands
// it (byteswapped_copy for a whole blob, ByteSwapFeed for a streamed one);
// on a little-endian host nothing is converted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace zt {

// Byte-swaps a stream of `elem_size`-byte elements given in arbitrary pieces
// (a streamed blob's appends need not end on element boundaries): whole
// elements go out swapped in bounded pieces, a partial one waits for the
// next piece.
class ByteSwapFeed {
 public:
  using Out = std::function<void(const uint8_t *, size_t)>;
  explicit ByteSwapFeed(size_t elem_size);
  void feed(const void *data, size_t len, const Out &out);
  // Emits a trailing partial element as it is (the writer's size checks
  // then refuse the blob, as they would on a little-endian host).
  void flush(const Out &out);

 private:
  size_t esize_;
  uint8_t carry_[8];
  size_t carry_len_ = 0;
  std::vector<uint8_t> buf_;
};

// A copy of `len` bytes with each whole `elem_size`-byte element reversed.
std::vector<uint8_t> byteswapped_copy(const void *data, size_t len, size_t elem_size);

}  // namespace zt
