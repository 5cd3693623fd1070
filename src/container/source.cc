// What every Source shares, on every platform: the defaults of its virtual
// functions, and sources over a caller's memory. Local files are the
// platform's (platform/file_source.h).
#include "container/source.h"

#include <cstring>

namespace zt {
namespace {

class MemorySource final : public Source {
 public:
  MemorySource(const void *data, size_t size) {
    data_ = static_cast<const uint8_t *>(data);
    size_ = size;
    path_ = "<memory>";
  }
  void read(uint64_t offset, size_t len, void *dst) const override {
    if (len) std::memcpy(dst, data_ + offset, len);
  }
};

}  // namespace

void Source::will_need(uint64_t, uint64_t) const {}

// Sources that cannot (not a file; Windows, which has no reopen() either,
// so the `prefetch` open option never starts there).
bool Source::populate(uint64_t, uint64_t, std::vector<uint8_t> &) const {
  return false;
}

// Windows has no mincore, memory is always resident: every range counts as
// cached and read_many keeps its parallel path (the streamed cold path is a
// Linux measurement, docs/cold-reads.md).
bool Source::likely_cached(uint64_t, uint64_t) const {
  return true;
}

// One read per piece (POSIX files override it with preadv; Windows has no
// preadv for ordinary, buffered files).
void Source::read_pieces(uint64_t offset, const Piece *pieces, size_t n) const {
  for (size_t i = 0; i < n; ++i) {
    if (pieces[i].dst) read(offset, pieces[i].len, pieces[i].dst);
    offset += pieces[i].len;
  }
}

void Source::read_groups(const Group *groups, size_t n) const {
  for (size_t i = 0; i < n; ++i) read_pieces(groups[i].offset, groups[i].pieces, groups[i].n);
}

std::unique_ptr<Source> open_memory_source(const void *data, size_t size) {
  return std::make_unique<MemorySource>(data, size);
}

}  // namespace zt
