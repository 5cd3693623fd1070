// Reader access to zt.zstd-seekable/1 parts (v2 §5.3): the decoder reads
// the stored stream through the source, a range at a time, so a ranged or
// sliced read fetches and decodes only the frames it needs, and digests and
// content rules see the decoded bytes a frame at a time.
#include "reader.h"
#include "util/error.h"

namespace zt {

std::unique_ptr<v2::ZstdSeekableDecoder> Reader::seekable_decoder(const Object &o, const Component &c) const {
  const uint64_t base = c.offset;
  const Source *src = &source_of(c);
  return std::make_unique<v2::ZstdSeekableDecoder>(
      [src, base](uint64_t off, size_t len, uint8_t *dst) { src->read(base + off, len, dst); }, c.length,
      c.decoded_length, "'" + source_->path() + "': " + where(o.name, c.role));
}

void Reader::for_each_digested_piece(const Object &o, const Component &c,
                                     const std::function<void(const uint8_t *, size_t)> &fn) const {
  if (!c.seekable) return for_each_stored_piece(c, fn);
  auto d = seekable_decoder(o, c);
  d->each(fn);
  if (d->frames() == 0) fn(nullptr, 0);
}

}  // namespace zt
