// ComponentStream: a pull reader of one component's decoded bytes, in
// pieces the caller sizes, with memory bounded by one input chunk and
// libzstd's window whatever the component's size (zt_component_stream_*).
// It shares the Reader, so it outlives zt_close of its file handle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "digest/digest.h"
#include "reader.h"

typedef struct ZSTD_DCtx_s ZSTD_DCtx;
typedef struct ZSTD_outBuffer_s ZSTD_outBuffer;

namespace zt {

class ComponentStream {
 public:
  // `keep_alive` (may be null) holds the reader for a stream that must
  // outlive every other owner (the C handle's).
  ComponentStream(const Reader &reader, std::shared_ptr<const Reader> keep_alive, const Object &o, const Component &c);
  ~ComponentStream();
  ComponentStream(const ComponentStream &) = delete;
  ComponentStream &operator=(const ComponentStream &) = delete;

  // Fills dst with the next decoded bytes: as many as fit, rounded down to
  // whole storage elements, fewer only at the end; 0 once everything was
  // delivered. The call that delivers the last bytes also checks the
  // decoded size and (verify-on-read) the digest, and throws on a mismatch.
  // After a throw the stream is failed: every later read throws again.
  size_t read(void *dst, size_t capacity);
  uint64_t position() const { return produced_; }

 private:
  // The next chunk of stored bytes (digested as it passes); false at end.
  bool next_input(const uint8_t *&p, size_t &n);
  size_t read_raw(uint8_t *dst, size_t want);
  size_t read_zstd(uint8_t *dst, size_t want);
  void refill();
  // One ZSTD_decompressStream call; returns the bytes it produced.
  size_t decompress(ZSTD_outBuffer &out);
  // The zstd stream after the declared size: must be at its end.
  void expect_zstd_end();
  void finish();
  [[noreturn]] void fail_stream(zt_status st, const std::string &msg);

  std::shared_ptr<const Reader> keep_alive_;
  const Reader *reader_;
  const Object &o_;
  const Component &c_;
  std::string ctx_;
  size_t elem_ = 1;  // storage element size (1 when unknown)
  bool swap_ = false;
  uint64_t limit_ = 0;  // decoded bytes allowed (declared, or the option's max)
  uint64_t produced_ = 0;
  uint64_t stored_pos_ = 0;  // stored bytes handed to the decoder / copied
  bool done_ = false;
  zt_status failed_ = ZT_OK;
  std::string failed_msg_;
  std::unique_ptr<Digester> digest_;  // set when verify-on-read must check
  // zstd only
  ZSTD_DCtx *dctx_ = nullptr;
  std::vector<uint8_t> in_buf_;  // pread sources
  const uint8_t *in_ = nullptr;
  size_t in_len_ = 0, in_pos_ = 0;
  bool input_end_ = false;
  size_t last_ret_ = 1;  // libzstd's hint; 0 when a frame just ended
};

}  // namespace zt
