// Reader::read_many: many components read at once, on the reader's
// threads, large raw ones in chunks and small neighbours together; and the
// cold-read path that streams them from a file not in the page cache.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <tuple>

#include "codec/codec.h"
#include "digest/digest.h"
#include "foreign/open_foreign.h"
#include "manifest/decode.h"
#include "prefetcher.h"
#include "reader.h"
#include "reader_internal.h"
#include "set/member_open.h"
#include "set/v2_shards.h"
#include "stream_parts.h"
#include "types/dtype.h"
#include "util/endian.h"
#include "util/error.h"
#include "util/size_cast.h"
#include "v2/manifest.h"
#include "v2/rule.h"
#include "v2/vocab.h"

namespace zt {

using reader_detail::ctx_of;
using reader_detail::LazyCtx;

namespace {
std::atomic<uint64_t> g_cold_streamed_bytes{0};
std::atomic<uint64_t> g_cold_reopened_streams{0};

}  // namespace

uint64_t cold_streamed_bytes() {
  return g_cold_streamed_bytes.load(std::memory_order_relaxed);
}
uint64_t cold_reopened_streams() {
  return g_cold_reopened_streams.load(std::memory_order_relaxed);
}

void Reader::read_many(std::vector<ReadJob> &jobs) const {
  // A unit of work: a whole job, or a chunk [begin, begin+len) of a large
  // raw one (copied straight from the source into the caller's buffer).
  struct Task {
    size_t job;
    uint64_t begin, len;
    // Batch: batched[begin, begin+len). Stream: part `job` of `stream`
    // (StreamParts), in order, on the thread that takes it.
    enum Kind { Whole, Chunk, Batch, Stream } kind;
    // Not 0: a cold range the prefetch thread will read; the task waits
    // until it has read this far, then copies from the page cache.
    uint64_t ready_at = 0;
  };
  constexpr uint64_t kChunk = uint64_t{4} << 20;
  constexpr uint64_t kParallelMinBytes = uint64_t{1} << 20;
  constexpr unsigned kColdStreams = 2;
  auto record = [](ReadJob &j, const Error &e) {
    j.status = e.status();
    j.error = e.what();
  };
  constexpr size_t kMaxBatch = 1024;
  // Verify-on-read first, in parallel: a job whose digest fails is recorded
  // as failed and skipped below, so no unchecked byte reaches its buffer.
  std::vector<size_t> pending;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].status == ZT_OK && digest_pending(*jobs[i].object, *jobs[i].component)) pending.push_back(i);
  parallel_for(pending.size(), threads(), [&](size_t k) {
    ReadJob &j = jobs[pending[k]];
    try {
      check_readable(*j.object, *j.component);
      verify_before_read(*j.object, *j.component);
    } catch (const Error &e) {
      record(j, e);
    }
  });
  std::vector<Task> tasks;
  tasks.reserve(jobs.size());
  // Raw ranges that are not in the page cache (Source::likely_cached, asked
  // before anything is read: a read makes its neighbours look warm). They
  // are read in file order, in at most kColdStreams contiguous parts each
  // read front to back by one thread, as `cat` reads: the kernel's
  // sequential readahead then keeps the disk streaming. Chunks handed out
  // in turn to two threads (the cached path) ran at 0.5-0.85x of a
  // sequential read on a cold file (docs/cold-reads.md has the figures).
  // Cached ranges keep the parallel copy: there the copy is the work.
  std::vector<Task> stream;
  std::vector<std::pair<size_t, size_t>> parts;  // of `stream`, one per reading thread
  // With the `prefetch` option, cold ranges its thread will reach are not
  // streamed: that thread already reads the file in order, and a copy
  // follows it (`follow`, after every other task). Two streams of read_many
  // beside it took turns with it on the disk (docs/cold-reads.md).
  std::vector<Task> follow;
  auto place = [&](Task t, bool cold, uint64_t end) {
    if (!cold) {
      tasks.push_back(t);
    } else if (prefetcher_ && prefetcher_->will_reach(end)) {
      t.ready_at = end;
      follow.push_back(t);
    } else {
      stream.push_back(t);
    }
  };
  std::vector<size_t> small_raw;
  uint64_t total = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    ReadJob &j = jobs[i];
    if (j.status != ZT_OK) continue;
    try {
      const Object &o = *j.object;
      const Component &c = *j.component;
      check_readable(o, c);
      if (!c.decoded_known) {  // legacy zstd: the size is learned by decoding
        tasks.push_back({i, 0, 0, Task::Whole});
        total += c.length;
        continue;
      }
      if (!fits_size_t(c.decoded_length))
        fail(ZT_E_LIMIT, ctx_of(o, c) + ": decoded size is " + std::to_string(c.decoded_length) +
                             " bytes, more than this process can address; read it by range");
      j.out_size = static_cast<size_t>(c.decoded_length);
      if (j.capacity < c.decoded_length)
        fail(ZT_E_BUFFER_TOO_SMALL, ctx_of(o, c) + ": decoded size is " + std::to_string(c.decoded_length) +
                                        " bytes, buffer has " + std::to_string(j.capacity));
      if (!j.dst && c.decoded_length) fail(ZT_E_INVALID_ARG, ctx_of(o, c) + ": dst is NULL");
      total += c.decoded_length;
      // Decode-on-read tensors (a foreign file's) are read whole: a whole
      // read decodes straight into the buffer, a chunk would keep a copy.
      // A part in a shard (v2) is read whole from its own file: chunks,
      // batches and streams below are of this file's bytes.
      if (c.file) {
        tasks.push_back({i, 0, 0, Task::Whole});
      } else if (c.encoding == ZT_ENCODING_RAW && !needs_swap(c) && c.length > 2 * kChunk &&
                 !manifest_.foreign_decoded) {
        const bool cold = !source_->likely_cached(c.offset, c.length);
        // Not on cold blobs: hinting every blob here, before any copy
        // starts, queues reads of all of them at once, and cold loads took
        // 1.3-1.9x as long as without the hint (docs/cold-reads.md).
        if (!cold) source_->will_need(c.offset, c.length);
        for (uint64_t off = 0; off < c.length; off += kChunk) {
          const uint64_t len = std::min(kChunk, c.length - off);
          place({i, off, len, Task::Chunk}, cold, c.offset + off + len);
        }
      } else if (c.encoding == ZT_ENCODING_RAW && !needs_swap(c)) {
        small_raw.push_back(i);
      } else {
        // zstd or byte-swapped: decoded as before, also beside the
        // prefetch thread. Waiting for it to read a whole blob first and
        // decoding then took 1.4x as long cold (docs/cold-reads.md): the
        // decode reading as the bytes arrive overlaps the two.
        tasks.push_back({i, 0, 0, Task::Whole});
      }
    } catch (const Error &e) {
      record(j, e);
    }
  }
  // Small raw blobs that follow each other in the file (a gap of padding at
  // most) become one task read with one scattered read: a file of many
  // small tensors then costs a few system calls, not one copy per tensor.
  std::vector<size_t> batched;
  if (!small_raw.empty()) {
    auto offset_of = [&](size_t i) { return jobs[i].component->offset; };
    auto by_offset = [&](size_t a, size_t b) { return offset_of(a) < offset_of(b); };
    if (!std::is_sorted(small_raw.begin(), small_raw.end(), by_offset))
      std::stable_sort(small_raw.begin(), small_raw.end(), by_offset);
    batched.reserve(small_raw.size());
    size_t first = 0;
    uint64_t batch_end = 0, batch_bytes = 0;
    auto close_batch = [&] {
      if (batched.size() > first) {
        const uint64_t begin = jobs[batched[first]].component->offset;
        const bool cold = !source_->likely_cached(begin, batch_end - begin);
        place({0, first, batched.size() - first, Task::Batch}, cold, batch_end);
      }
      first = batched.size();
      batch_bytes = 0;
    };
    for (size_t i : small_raw) {
      const Component &c = *jobs[i].component;
      const bool joins = batched.size() > first && c.offset >= batch_end && c.offset - batch_end <= Source::kMaxGap &&
                         batch_bytes + c.length <= kChunk && batched.size() - first < kMaxBatch;
      if (!joins) close_batch();
      batched.push_back(i);
      batch_end = c.offset + c.length;
      batch_bytes += c.length;
    }
    close_batch();
  }
  if (!stream.empty()) {
    auto offset_of = [&](const Task &t) {
      return t.kind == Task::Batch ? jobs[batched[t.begin]].component->offset : jobs[t.job].component->offset + t.begin;
    };
    auto bytes_of = [&](const Task &t) {
      if (t.kind == Task::Chunk) return t.len;
      const Component &last = *jobs[batched[t.begin + t.len - 1]].component;
      return last.offset + last.length - offset_of(t);
    };
    std::stable_sort(stream.begin(), stream.end(),
                     [&](const Task &a, const Task &b) { return offset_of(a) < offset_of(b); });
    uint64_t cold_bytes = 0;
    for (const Task &t : stream) cold_bytes += bytes_of(t);
    g_cold_streamed_bytes.fetch_add(cold_bytes, std::memory_order_relaxed);
    // Contiguous parts of equal size, one per stream, each read in file
    // order by one thread: two such streams kept the disk as busy as `cat`
    // and split the page faults of new destination memory (one stream alone
    // waited on them; measured in docs/cold-reads.md). A stream that runs
    // out takes the second half of what is left of the longest other one
    // (and reads it in order too): a thread that the scheduler set aside
    // (a busy machine, a framework's spinning threads) does not leave its
    // part unread while the other thread idles. The streams go first so
    // that threads start them at once; other threads then take the cached
    // and the zstd tasks.
    const unsigned streams = std::max(1u, std::min(total >= kParallelMinBytes ? threads() : 1u, kColdStreams));
    std::vector<Task> heads;
    size_t from = 0;
    uint64_t done = 0;
    for (unsigned k = 1; k <= streams && from < stream.size(); ++k) {
      const uint64_t goal = cold_bytes / streams * k;
      size_t to = from;
      while (to < stream.size() && (done < goal || k == streams)) done += bytes_of(stream[to++]);
      if (to > from) {
        heads.push_back({heads.size(), from, to - from, Task::Stream});
        parts.push_back({from, to});
      }
      from = to;
    }
    tasks.insert(tasks.begin(), heads.begin(), heads.end());
  }
  // Every stream but the first reads through its own opening of the file
  // (Source::reopen): the kernel keeps readahead state per open file, and
  // two streams sharing one looked like seeks to it, so it often stopped
  // reading ahead for both (cold loads 1.1-1.3x slower in those rounds).
  // A part stolen by a thread keeps that thread's opening.
  std::vector<std::unique_ptr<Source>> own(parts.size());
  for (size_t k = 1; k < own.size(); ++k) {
    own[k] = source_->reopen();
    if (own[k]) g_cold_reopened_streams.fetch_add(1, std::memory_order_relaxed);
  }
  if (!follow.empty()) prefetcher_->copies_follow();
  std::stable_sort(follow.begin(), follow.end(), [](const Task &a, const Task &b) { return a.ready_at < b.ready_at; });
  tasks.insert(tasks.end(), follow.begin(), follow.end());
  StreamParts cold_parts(std::move(parts));
  std::mutex mu;  // guards the status of jobs split into chunks
  std::function<void(const Task &, const Source &)> run_task = [&](const Task &task, const Source &src) {
    if (task.ready_at) {
      if (task.kind == Task::Chunk)
        prefault_destination(static_cast<uint8_t *>(jobs[task.job].dst) + task.begin, static_cast<size_t>(task.len));
      prefetcher_->wait_until(task.ready_at);
    }
    if (task.kind == Task::Stream) {
      const Source &mine = own[task.job] ? *own[task.job] : src;
      for (size_t k; (k = cold_parts.claim(task.job)) != SIZE_MAX;) run_task(stream[k], mine);
      return;
    }
    if (task.kind == Task::Batch) {
      read_batch(jobs, batched.data() + task.begin, static_cast<size_t>(task.len), src);
      return;
    }
    ReadJob &j = jobs[task.job];
    try {
      if (task.kind == Task::Whole)
        j.out_size = read(*j.object, *j.component, j.dst, j.capacity);
      else
        src.read(j.component->offset + task.begin, static_cast<size_t>(task.len),
                 static_cast<uint8_t *>(j.dst) + task.begin);
    } catch (const Error &e) {
      std::lock_guard<std::mutex> lock(mu);
      if (j.status == ZT_OK) record(j, e);
    }
  };
  // Small batches are not worth starting threads for.
  parallel_for(tasks.size(), total >= kParallelMinBytes ? threads() : 1,
               [&](size_t t) { run_task(tasks[t], *source_); });
}

// Jobs idx[0..n): raw, unswapped, checked, in file order, each starting at
// most Source::kMaxGap bytes after the previous one ends.
void Reader::read_batch(std::vector<ReadJob> &jobs, const size_t *idx, size_t n, const Source &src) const {
  std::vector<Source::Piece> pieces;
  pieces.reserve(2 * n);
  uint64_t end = 0;
  for (size_t k = 0; k < n; ++k) {
    const Component &c = *jobs[idx[k]].component;
    if (k > 0 && c.offset > end) pieces.push_back({nullptr, static_cast<size_t>(c.offset - end)});
    pieces.push_back({jobs[idx[k]].dst, static_cast<size_t>(c.length)});
    end = c.offset + c.length;
  }
  try {
    src.read_pieces(jobs[idx[0]].component->offset, pieces.data(), pieces.size());
  } catch (const Error &e) {
    // An I/O error is not one blob's: every job of the batch reports it.
    for (size_t k = 0; k < n; ++k) {
      ReadJob &j = jobs[idx[k]];
      j.status = e.status();
      j.error = ctx_of(*j.object, *j.component) + ": " + e.what();
    }
  }
}

void Reader::read_range(const Object &o, const Component &c, uint64_t first, uint64_t count, void *dst,
                        size_t capacity) const {
  const Source &file = source_of(c);
  check_readable(o, c);
  const LazyCtx ctx{o, c};
  const size_t es = dtype_size(c.dtype);
  auto begin = checked_mul(first, es), bytes = checked_mul(count, es);
  std::optional<uint64_t> end = begin && bytes ? checked_add(*begin, *bytes) : std::nullopt;
  uint64_t total = decoded_size(o, c);
  if (!end || *end > total)
    fail(ZT_E_INVALID_ARG, ctx + ": elements [" + std::to_string(first) + ", +" + std::to_string(count) +
                               ") are outside the component (" + std::to_string(es ? total / es : 0) + " elements)");
  if (capacity < *bytes)
    fail(ZT_E_BUFFER_TOO_SMALL,
         ctx + ": range needs " + std::to_string(*bytes) + " bytes, buffer has " + std::to_string(capacity));
  verify_before_read(o, c);
  if (c.encoding == ZT_ENCODING_RAW) {
    file.read(c.offset + *begin, static_cast<size_t>(*bytes), dst);
  } else if (c.seekable) {
    seekable_decoder(o, c)->read(*begin, static_cast<size_t>(*bytes), static_cast<uint8_t *>(dst));
  } else {
    std::vector<uint8_t> stored;
    const uint8_t *src = stored_bytes(c, stored);
    zstd_decode_range(src, c.length, dst, *begin, static_cast<size_t>(*bytes), ctx.str());
  }
  if (needs_swap(c)) byteswap_inplace(dst, static_cast<size_t>(*bytes), es);
}

}  // namespace zt
