#include "component_stream.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "codec/codec.h"
#include "types/dtype.h"
#include "util/error.h"

namespace zt {
namespace {

constexpr size_t kInputChunk = size_t{1} << 20;

}  // namespace

ComponentStream::ComponentStream(const Reader &reader, std::shared_ptr<const Reader> keep_alive, const Object &o,
                                 const Component &c)
    : keep_alive_(std::move(keep_alive)), reader_(&reader), o_(o), c_(c), ctx_(where(o.name, c.role)) {
  reader_->check_readable(o, c);
  const size_t es = dtype_size(c.dtype);
  elem_ = es ? es : 1;
  swap_ = needs_swap(c) && es > 1;  // stored order differs from the host's
  if (c.encoding == ZT_ENCODING_RAW) {
    limit_ = c.length;
  } else {
    limit_ = c.decoded_known ? c.decoded_length : reader_->options().max_decoded_size;
    dctx_ = ZSTD_createDCtx();
    if (!dctx_) fail(ZT_E_NOMEM, ctx_ + ": cannot allocate a zstd decompression context");
    if (!reader_->source_of(c).data()) in_buf_.resize(static_cast<size_t>(std::min<uint64_t>(c.length, kInputChunk)));
  }
  if (c.seekable) {
    // zt.zstd-seekable/1: the seek table is checked first; its digest
    // covers the decoded bytes, so verify-on-read checks it here, frame by
    // frame, rather than over the stored bytes as they pass.
    reader_->seekable_decoder(o, c);
    reader_->verify_before_read(o, c);
    return;
  }
  if (reader_->digest_pending(o, c)) digest_ = std::make_unique<Digester>(c.parsed_digest.alg);
}

ComponentStream::~ComponentStream() {
  ZSTD_freeDCtx(dctx_);
}

void ComponentStream::fail_stream(zt_status st, const std::string &msg) {
  failed_ = st;
  failed_msg_ = msg;
  fail(st, msg);
}

size_t ComponentStream::read(void *dst, size_t capacity) {
  if (failed_ != ZT_OK) fail(failed_, failed_msg_);
  if (done_) return 0;
  try {
    size_t want = capacity - capacity % elem_;
    if (want == 0 && produced_ < limit_ && capacity > 0)
      fail(ZT_E_BUFFER_TOO_SMALL, ctx_ + ": a stream read needs room for one element (" + std::to_string(elem_) +
                                      " bytes), the buffer has " + std::to_string(capacity));
    if (want && !dst) fail(ZT_E_INVALID_ARG, ctx_ + ": dst is NULL");
    auto *out = static_cast<uint8_t *>(dst);
    size_t n = c_.encoding == ZT_ENCODING_RAW ? read_raw(out, want) : read_zstd(out, want);
    if (swap_) byteswap_inplace(out, n, elem_);
    return n;
  } catch (const Error &e) {
    // A caller's mistake leaves the stream usable; damage fails it for good.
    if (e.status() == ZT_E_BUFFER_TOO_SMALL || e.status() == ZT_E_INVALID_ARG) throw;
    // Damaged bytes usually break the frame before the digest's turn comes:
    // with verify-on-read, name the cause, checking the whole digest now.
    if (digest_ && e.status() != ZT_E_DIGEST_MISMATCH) {
      digest_.reset();
      try {
        reader_->verify_before_read(o_, c_);
      } catch (const Error &d) {
        fail_stream(d.status(), d.what());
      }
    }
    fail_stream(e.status(), e.what());
  }
}

bool ComponentStream::next_input(const uint8_t *&p, size_t &n) {
  if (stored_pos_ >= c_.length) return false;
  n = static_cast<size_t>(std::min<uint64_t>(c_.length - stored_pos_, kInputChunk));
  if (reader_->source_of(c_).data()) {
    reader_->source_of(c_).materialize(c_.offset + stored_pos_, n);
    p = reader_->source_of(c_).data() + c_.offset + stored_pos_;
  } else {
    reader_->source_of(c_).read(c_.offset + stored_pos_, n, in_buf_.data());
    p = in_buf_.data();
  }
  if (digest_) digest_->update(p, n);
  stored_pos_ += n;
  return true;
}

size_t ComponentStream::read_raw(uint8_t *dst, size_t want) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(want, c_.length - produced_));
  if (n) {
    reader_->source_of(c_).read(c_.offset + produced_, n, dst);
    if (digest_) digest_->update(dst, n);  // before any byte swap: the stored bytes
    produced_ += n;
    stored_pos_ = produced_;
  }
  if (produced_ == c_.length) finish();
  return n;
}

// Loads the next input chunk when the current one is used up; after the
// last, input_end_ is set and the decoder is still called (with no input)
// to flush what it holds.
void ComponentStream::refill() {
  if (in_pos_ < in_len_ || input_end_) return;
  if (next_input(in_, in_len_))
    in_pos_ = 0;
  else
    input_end_ = true;
}

size_t ComponentStream::decompress(ZSTD_outBuffer &out) {
  ZSTD_inBuffer in{in_, in_len_, in_pos_};
  const size_t before = out.pos, in_before = in.pos;
  const size_t ret = ZSTD_decompressStream(dctx_, &out, &in);
  in_pos_ = in.pos;
  if (ZSTD_isError(ret))
    fail(ZT_E_CORRUPT, ctx_ + ": zstd decompression failed after " + std::to_string(produced_ + before) +
                           " decoded bytes: " + ZSTD_getErrorName(ret));
  // A call that neither consumed nor produced anything says nothing of the
  // frame (after a frame's end it asks for the next frame's header), so
  // only calls that made progress update whether a frame is open.
  if (out.pos != before || in.pos != in_before) last_ret_ = ret;
  return out.pos - before;
}

size_t ComponentStream::read_zstd(uint8_t *dst, size_t want) {
  // Never past the declared size: the output window ends there.
  want = static_cast<size_t>(std::min<uint64_t>(want, limit_ - produced_));
  ZSTD_outBuffer out{dst, want, 0};
  while (out.pos < out.size) {
    refill();
    const size_t got = decompress(out);
    if (input_end_ && got == 0) break;  // all input given, nothing more comes out
  }
  produced_ += out.pos;
  if (out.pos < out.size) {
    // The stored bytes ended before the buffer was full.
    if (last_ret_ != 0 && c_.length != 0)
      fail(ZT_E_CORRUPT, ctx_ + ": zstd stream is truncated (frame not complete) after " + std::to_string(produced_) +
                             " decoded bytes");
    if (c_.decoded_known && produced_ < c_.decoded_length)
      fail(ZT_E_DECODED_SIZE, ctx_ + ": zstd data decodes to " + std::to_string(produced_) + " bytes, but " +
                                  std::to_string(c_.decoded_length) + " are declared");
    finish();
  } else if (produced_ == limit_) {
    expect_zstd_end();
    finish();
  }
  return out.pos;
}

void ComponentStream::expect_zstd_end() {
  // Whatever stored bytes are left must decode to nothing (a frame's end,
  // skippable frames); one byte of room for output settles it without
  // decoding the excess.
  uint8_t probe;
  for (;;) {
    refill();
    const size_t pos_before = in_pos_;
    ZSTD_outBuffer out{&probe, 1, 0};
    if (decompress(out)) {
      if (c_.decoded_known)
        fail(ZT_E_DECODED_SIZE,
             ctx_ + ": zstd data decodes to more than the " + std::to_string(c_.decoded_length) + " bytes declared");
      fail(ZT_E_LIMIT, ctx_ + ": zstd data decodes to more than the limit of " + std::to_string(limit_) + " bytes");
    }
    if (input_end_) break;                                  // all input given, no output: at the end
    if (in_pos_ == pos_before && in_pos_ < in_len_) break;  // no progress with room for output: never spin
  }
  if (last_ret_ != 0 && c_.length != 0)
    fail(ZT_E_CORRUPT, ctx_ + ": zstd stream is truncated (frame not complete) after " + std::to_string(produced_) +
                           " decoded bytes");
}

void ComponentStream::finish() {
  if (digest_) {
    // Stored bytes the decoder did not need still belong to the digest.
    const uint8_t *p;
    size_t n;
    while (next_input(p, n)) {
    }
    const std::string got = digest_->finish_string();
    const ParsedDigest parsed = parse_digest(got);
    const bool match = c_.parsed_digest.alg == ZT_DIGEST_SHA256
                           ? std::memcmp(parsed.bytes, c_.parsed_digest.bytes, 32) == 0
                           : parsed.crc == c_.parsed_digest.crc;
    digest_.reset();
    if (!match) fail(ZT_E_DIGEST_MISMATCH, reader_->digest_mismatch_message(o_, c_, got));
    reader_->mark_verified(o_, c_);
  }
  done_ = true;
}

}  // namespace zt
