// Where a file's bytes come from: a memory map, pread(2), or a caller's
// buffer. Readers ask for ranges; only mapped and memory sources can lend a
// pointer (zero-copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/file_source.h"

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
  // The bytes a reader parses at open (magic, footer, manifest): a pointer
  // into the source, or into `scratch`. A mapped file reads them with
  // pread: through the map, a cold file faults in a whole readahead window
  // (the device's read_ahead_kb, megabytes) around each, one synchronous
  // read after the other (7-12 ms of a 110 ms cold load here), where pread
  // reads little more than was asked (docs/cold-reads.md).
  virtual const uint8_t *read_meta(uint64_t offset, size_t len, std::vector<uint8_t> &scratch) const {
    if (data_) return data_ + offset;
    scratch.resize(len);
    read(offset, len, scratch.data());
    return scratch.data();
  }
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
  // The widest gap a strided read may skip inside one group: kMaxGap for
  // files; 0 for a remote source, whose read_groups merges ranges by its
  // own cost model (io/range_plan.h).
  virtual uint64_t slice_gap() const { return kMaxGap; }
  // Between begin_plan and end_plan(true), this thread's read_groups calls
  // may be queued and fetched together at end_plan (their pieces' buffers
  // must live until then): a remote source plans the requests of several
  // slices at once. end_plan(false) drops what was queued. Files read at
  // once; these do nothing.
  // Threads worth running for a batch of reads (read_many) when the
  // caller did not say: 0 = one per core. A remote source waits on round
  // trips, not on cores, and wants more.
  virtual unsigned preferred_threads() const { return 0; }
  virtual void begin_plan() const {}
  // True for a source whose every request waits a round trip (a remote
  // one): Reader::read_many gives it all the raw blobs of a call as one
  // plan (read_groups between begin_plan and end_plan), which it spreads
  // over its connections in as few waves of requests as it can. Cut into
  // 4 MiB reads on threads, each piece would wait its own round trip.
  virtual bool plans_bulk_reads() const { return false; }
  virtual void end_plan(bool /*execute*/) const {}
  // Hints that [offset, offset+len) will be read soon (madvise/fadvise).
  virtual void will_need(uint64_t offset, uint64_t len) const;
  // Whether [offset, offset+len) is likely in the page cache already: file
  // sources sample a few pages of its interior with mincore(2) (its edges
  // may have been read with a neighbour). Reads of a cold range go in file
  // order on one thread (Reader::read_many, docs/cold-reads.md). Sources
  // that are not files, and any probe that fails, say true: such ranges
  // keep the parallel path.
  virtual bool likely_cached(uint64_t offset, uint64_t len) const;
  // A second, independent opening of the same file, read with pread: its
  // own file description, and so its own readahead state. Two threads
  // streaming two parts of a cold file through one description each look
  // like seeks to the kernel, which then reads ahead for neither
  // (Reader::read_many). nullptr when the source is not a local file or
  // cannot be reopened as the same file.
  virtual std::unique_ptr<Source> reopen() const { return nullptr; }
  // Brings [offset, offset+len) into the page cache and returns once it is
  // there, copying nothing out (the `prefetch` open option, src/prefetcher.h);
  // `scratch` is the caller's, kept between calls. False when this source
  // cannot (not a file, an I/O error, the file shrank): the caller stops
  // asking.
  virtual bool populate(uint64_t offset, uint64_t len, std::vector<uint8_t> &scratch) const;
  // Makes [offset, offset+len) of data() readable: a source whose bytes are
  // produced on first read (a foreign file's compressed members,
  // src/foreign/decode_on_read.h) produces them here. Readers call it before
  // they use a pointer into data(); read() and read_meta() do it themselves.
  // Nothing to do for file and memory sources.
  virtual void materialize(uint64_t offset, uint64_t len) const {
    (void)offset;
    (void)len;
  }

 protected:
  uint64_t size_ = 0;
  const uint8_t *data_ = nullptr;
  std::string path_;
  std::string unmapped_reason_;
};

std::unique_ptr<Source> open_memory_source(const void *data, size_t size);
// Local files: the platform's sources (platform/file_source.h).

}  // namespace zt
