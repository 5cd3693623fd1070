// Where a file's bytes come from: a memory map, pread(2), or a caller's
// buffer. Readers ask for ranges; only mapped and memory sources can lend a
// pointer (zero-copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace zt {

class Source {
 public:
  virtual ~Source() = default;
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }
  // Whole-file pointer for mapped/memory sources, nullptr for pread.
  const uint8_t *data() const { return data_; }
  // Why a file opened for mapping has no pointer (it does not fit in the
  // address space: 32-bit hosts); empty otherwise.
  const std::string &unmapped_reason() const { return unmapped_reason_; }
  // Copies [offset, offset+len) into dst; the range must be inside the file.
  virtual void read(uint64_t offset, size_t len, void *dst) const = 0;
  // One contiguous file range scattered into several buffers, in order; a
  // piece with dst == nullptr is skipped (the padding between two blobs).
  // File sources do it in one preadv(2) per IOV_MAX pieces: many small
  // blobs cost a few system calls and no page faults.
  struct Piece {
    void *dst;
    size_t len;
  };
  static constexpr size_t kMaxGap = 4096;  // the widest skipped piece
  virtual void read_pieces(uint64_t offset, const Piece *pieces, size_t n) const;
  // Several such ranges at once (a strided slice: one per group of runs).
  // A remote source fetches exactly these ranges, concurrently, instead of
  // whole cache blocks; the default reads them one after another.
  struct Group {
    uint64_t offset;
    const Piece *pieces;
    size_t n;
  };
  virtual void read_groups(const Group *groups, size_t n) const;
  // Hints that [offset, offset+len) will be read soon (madvise/fadvise).
  virtual void will_need(uint64_t offset, uint64_t len) const;
  // Whether [offset, offset+len) is likely in the page cache already: file
  // sources sample a few pages of its interior with mincore(2) (its edges
  // may have been read with a neighbour). Reads of a cold range go in file
  // order on one thread (Reader::read_many, docs/cold-reads.md). Sources
  // that are not files, and any probe that fails, say true: such ranges
  // keep the parallel path.
  virtual bool likely_cached(uint64_t offset, uint64_t len) const;

 protected:
  uint64_t size_ = 0;
  const uint8_t *data_ = nullptr;
  std::string path_;
  std::string unmapped_reason_;
};

// Whether the middle page of [dst, dst+len) is already in memory (mincore):
// the caller wrote it before, e.g. a model's parameters loaded into again.
// New memory (numpy's np.empty in Python's load_file, a fresh arena) is
// faulted in by the copy itself; there the streamed cold reads ran bimodal
// (rounds 2-4x slower, docs/cold-reads.md) while the parallel chunks stayed
// steady, so Reader::read_many streams cold ranges only into present memory.
bool memory_present(const void *dst, uint64_t len);

std::unique_ptr<Source> open_mmap_source(const std::string &path);
std::unique_ptr<Source> open_pread_source(const std::string &path);
std::unique_ptr<Source> open_memory_source(const void *data, size_t size);
// The same over a descriptor the caller opened (read-only, regular): the
// source owns it from the call on, also when it throws. `path` names the
// file in messages.
std::unique_ptr<Source> open_mmap_source(int fd, const std::string &path);
std::unique_ptr<Source> open_pread_source(int fd, const std::string &path);
// Mapped sources that still hold their descriptor (at most a quarter of
// RLIMIT_NOFILE, 256: past that a mapped file closes it once mapped and
// copies from the map instead of pread). For tests.
int mapped_sources_holding_fds();

}  // namespace zt
