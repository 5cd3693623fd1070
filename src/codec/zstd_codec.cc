#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "codec/codec.h"
#include "platform/process.h"
#include "platform/thread_cache.h"
#include "util/error.h"

namespace zt {
namespace {

struct DCtxHolder {
  ZSTD_DCtx *ctx = ZSTD_createDCtx();
  ~DCtxHolder() { ZSTD_freeDCtx(ctx); }
};

ZSTD_DCtx *thread_dctx() {
  DCtxHolder *holder = thread_cache<DCtxHolder>();
  if (!holder || !holder->ctx) fail(ZT_E_NOMEM, "cannot allocate a zstd decompression context");
  return holder->ctx;
}

// A compression context with workers owns threads and tens of MiB of
// buffers: made anew for every blob, that was 8% of a streamed zstd-3 write
// (fresh memory is slow to touch on some machines). So a finished context
// waits, one per thread, for the next blob compressed there. Each is lent
// whole to one user: a stream keeps its own until it ends, and a second
// writer compressing on the same thread meanwhile gets another.
//
// Its worker threads stay with the process that made it: in a forked
// child (the thread that forked keeps its idle context) they do not exist,
// and compressing with it would wait for them forever, freeing it would
// join them. A context of another process is left alone (leaked), never
// reused or freed (src/platform/process.h).
struct IdleCCtx {
  ZSTD_CCtx *ctx = nullptr;
  unsigned long pid = 0;  // the process that made ctx
  ~IdleCCtx() {
    if (pid == current_process_id()) ZSTD_freeCCtx(ctx);
  }
};

struct CCtxLease {
  ZSTD_CCtx *ctx = nullptr;
  unsigned long pid = current_process_id();
  CCtxLease() {
    IdleCCtx *idle = thread_cache<IdleCCtx>();
    if (idle && idle->ctx && idle->pid == pid) ctx = idle->ctx;
    if (idle) idle->ctx = nullptr;  // lent out, or another process's: dropped
    if (!ctx) ctx = ZSTD_createCCtx();
    if (!ctx) fail(ZT_E_NOMEM, "cannot allocate a zstd compression context");
  }
  ~CCtxLease() {
    if (!ctx || pid != current_process_id()) return;  // a stream inherited across fork
    IdleCCtx *idle = thread_cache<IdleCCtx>();
    if (!idle || idle->ctx) {
      ZSTD_freeCCtx(ctx);
      return;
    }
    // A context given up mid-frame (the sink threw) is reset when next used.
    idle->ctx = ctx;
    idle->pid = pid;
  }
  CCtxLease(const CCtxLease &) = delete;
  CCtxLease &operator=(const CCtxLease &) = delete;
};

// Streams the input through the decoder; calls sink(ptr, n) with each output
// piece until it returns false. Returns total produced; throws on corruption.
template <typename Sink>
void stream_decode(const void *src, size_t src_len, const std::string &ctx, Sink sink, bool stop_early_ok) {
  ZSTD_DCtx *d = thread_dctx();
  ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
  ZSTD_inBuffer in{src, src_len, 0};
  std::vector<uint8_t> buf(ZSTD_DStreamOutSize());
  size_t ret = 1;
  while (true) {
    ZSTD_outBuffer out{buf.data(), buf.size(), 0};
    ret = ZSTD_decompressStream(d, &out, &in);
    if (ZSTD_isError(ret)) fail(ZT_E_CORRUPT, ctx + ": zstd decompression failed: " + ZSTD_getErrorName(ret));
    if (out.pos && !sink(buf.data(), out.pos)) {
      if (stop_early_ok) return;
    }
    if (ret == 0 && in.pos == in.size) break;            // every frame complete
    if (in.pos == in.size && out.pos < out.size) break;  // wants more input
  }
  if (ret != 0) fail(ZT_E_CORRUPT, ctx + ": zstd stream is truncated (frame not complete)");
}

}  // namespace

void zstd_decode_exact(const void *src, size_t src_len, void *dst, size_t expected, const std::string &ctx) {
  if (src_len == 0) {
    if (expected == 0) return;
    fail(ZT_E_CORRUPT, ctx + ": empty zstd stream where " + std::to_string(expected) + " bytes are declared");
  }
  ZSTD_DCtx *d = thread_dctx();
  size_t r = ZSTD_decompressDCtx(d, dst, expected, src, src_len);
  if (!ZSTD_isError(r)) {
    if (r != expected)
      fail(ZT_E_DECODED_SIZE, ctx + ": zstd data decodes to " + std::to_string(r) + " bytes, but " +
                                  std::to_string(expected) + " are declared");
    return;
  }
  if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) {
    // It decodes to more than declared: that settles it. Decoding on to
    // count the excess would let a few KB of frame cost gigabytes of work.
    fail(ZT_E_DECODED_SIZE,
         ctx + ": zstd data decodes to more than the " + std::to_string(expected) + " bytes declared");
  }
  fail(ZT_E_CORRUPT, ctx + ": zstd decompression failed: " + ZSTD_getErrorName(r));
}

std::vector<uint8_t> zstd_decode_bounded(const void *src, size_t src_len, uint64_t limit, const std::string &ctx) {
  std::vector<uint8_t> out;
  if (src_len == 0) return out;
  stream_decode(
      src, src_len, ctx,
      [&](const uint8_t *p, size_t n) {
        if (out.size() + n > limit)
          fail(ZT_E_LIMIT, ctx + ": zstd data decodes to more than the limit of " + std::to_string(limit) + " bytes");
        out.insert(out.end(), p, p + n);
        return true;
      },
      false);
  return out;
}

void zstd_decode_range(const void *src, size_t src_len, void *dst, uint64_t begin, size_t count,
                       const std::string &ctx) {
  if (count == 0) return;
  auto *d = static_cast<uint8_t *>(dst);
  uint64_t pos = 0;  // decoded bytes seen so far
  size_t got = 0;
  try {
    stream_decode(
        src, src_len, ctx,
        [&](const uint8_t *p, size_t n) {
          uint64_t lo = std::max<uint64_t>(pos, begin), hi = std::min<uint64_t>(pos + n, begin + count);
          if (hi > lo) {
            std::memcpy(d + (lo - begin), p + (lo - pos), hi - lo);
            got += hi - lo;
          }
          pos += n;
          return got < count;
        },
        true);
  } catch (const Error &) {
    if (got < count) throw;
  }
  if (got < count)
    fail(ZT_E_DECODED_SIZE,
         ctx + ": zstd data ends after " + std::to_string(pos) + " bytes, before the requested range");
}

uint64_t zstd_decode_until(const void *src, size_t src_len, const std::string &ctx,
                           const std::function<bool(const uint8_t *, size_t)> &sink) {
  uint64_t pos = 0;
  if (src_len == 0) return 0;
  bool stopped = false;
  try {
    stream_decode(
        src, src_len, ctx,
        [&](const uint8_t *p, size_t n) {
          pos += n;
          stopped = !sink(p, n);
          return !stopped;
        },
        true);
  } catch (const Error &) {
    if (!stopped) throw;
  }
  return pos;
}

uint64_t zstd_decode_each(const void *src, size_t src_len, uint64_t limit, const std::string &ctx,
                          const std::function<void(const uint8_t *, size_t)> &sink) {
  uint64_t total = 0;
  if (src_len == 0) return 0;
  stream_decode(
      src, src_len, ctx,
      [&](const uint8_t *p, size_t n) {
        total += n;
        if (total > limit)
          fail(ZT_E_DECODED_SIZE,
               ctx + ": zstd data decodes to more than the " + std::to_string(limit) + " bytes declared");
        sink(p, n);
        return true;
      },
      false);
  return total;
}

std::optional<uint64_t> zstd_single_frame_content_size(const void *src, size_t src_len) {
  if (src_len == 0) return std::nullopt;
  const size_t frame = ZSTD_findFrameCompressedSize(src, src_len);
  if (ZSTD_isError(frame) || frame != src_len) return std::nullopt;
  const unsigned long long size = ZSTD_getFrameContentSize(src, src_len);
  if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR) return std::nullopt;
  return static_cast<uint64_t>(size);
}

void zstd_compress_each(const void *src, size_t len, int level, unsigned threads,
                        const std::function<void(const uint8_t *, size_t)> &sink) {
  CCtxLease lease;
  ZSTD_CCtx *c = lease.ctx;
  ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  // Frames carry no content size, like the reference writer's: the manifest
  // holds uncompressed_length.
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  if (threads > 1) ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, static_cast<int>(threads));
  // The whole input goes in with the first call, so libzstd sizes the frame
  // exactly as ZSTD_compress2 would (same bytes); the output comes out
  // through one reused buffer instead of a compressBound()-sized one that
  // is new memory for every blob, and a sink can write a piece while the
  // workers compress the next ones.
  struct OutputBufferTag;
  std::unique_ptr<uint8_t[]> *cached = thread_cache<std::unique_ptr<uint8_t[]>, OutputBufferTag>();
  if (!cached) fail(ZT_E_NOMEM, "cannot allocate the zstd output buffer");
  std::unique_ptr<uint8_t[]> &buf = *cached;
  const size_t cap = size_t{1} << 20;
  if (!buf) buf.reset(new uint8_t[cap]);
  ZSTD_inBuffer in{src, len, 0};
  size_t r;
  do {
    ZSTD_outBuffer o{buf.get(), cap, 0};
    r = ZSTD_compressStream2(c, &o, &in, ZSTD_e_end);
    if (ZSTD_isError(r)) fail(ZT_E_COMPRESS, std::string("zstd compression failed: ") + ZSTD_getErrorName(r));
    if (o.pos) sink(buf.get(), o.pos);
  } while (r != 0);
}

struct ZstdStream::Impl {
  CCtxLease lease;
  ZSTD_CCtx *c = lease.ctx;
  // Not value-initialized: output only ever touches what it fills.
  size_t cap = ZSTD_CStreamOutSize();
  std::unique_ptr<uint8_t[]> buf{new uint8_t[cap]};
};

ZstdStream::ZstdStream(int level, unsigned threads) : impl_(std::make_unique<Impl>()) {
  ZSTD_CCtx_reset(impl_->c, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(impl_->c, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(impl_->c, ZSTD_c_contentSizeFlag, 0);
  if (threads > 1) ZSTD_CCtx_setParameter(impl_->c, ZSTD_c_nbWorkers, static_cast<int>(threads));
}

ZstdStream::~ZstdStream() = default;

void ZstdStream::update(const void *src, size_t len, const Sink &sink) {
  ZSTD_inBuffer in{src, len, 0};
  while (in.pos < in.size) {
    ZSTD_outBuffer o{impl_->buf.get(), impl_->cap, 0};
    size_t r = ZSTD_compressStream2(impl_->c, &o, &in, ZSTD_e_continue);
    if (ZSTD_isError(r)) fail(ZT_E_COMPRESS, std::string("zstd compression failed: ") + ZSTD_getErrorName(r));
    if (o.pos) sink(impl_->buf.get(), o.pos);
  }
}

void ZstdStream::finish(const Sink &sink) {
  ZSTD_inBuffer in{nullptr, 0, 0};
  size_t r;
  do {
    ZSTD_outBuffer o{impl_->buf.get(), impl_->cap, 0};
    r = ZSTD_compressStream2(impl_->c, &o, &in, ZSTD_e_end);
    if (ZSTD_isError(r)) fail(ZT_E_COMPRESS, std::string("zstd compression failed: ") + ZSTD_getErrorName(r));
    if (o.pos) sink(impl_->buf.get(), o.pos);
  } while (r != 0);
}

namespace {

template <typename T, T (*Swap)(T)>
void swap_each(uint8_t *p, size_t len) {
  for (size_t i = 0; i + sizeof(T) <= len; i += sizeof(T)) {
    T v;
    std::memcpy(&v, p + i, sizeof v);
    v = Swap(v);
    std::memcpy(p + i, &v, sizeof v);
  }
}

uint16_t bswap16(uint16_t v) {
  return __builtin_bswap16(v);
}
uint32_t bswap32(uint32_t v) {
  return __builtin_bswap32(v);
}
uint64_t bswap64(uint64_t v) {
  return __builtin_bswap64(v);
}

}  // namespace

void byteswap_inplace(void *data, size_t len, size_t elem_size) {
  auto *p = static_cast<uint8_t *>(data);
  if (elem_size == 2)
    swap_each<uint16_t, bswap16>(p, len);
  else if (elem_size == 4)
    swap_each<uint32_t, bswap32>(p, len);
  else if (elem_size == 8)
    swap_each<uint64_t, bswap64>(p, len);
}

}  // namespace zt
