// Sinks that are not files: a growing buffer in memory, handed to the caller
// whole at the end (zt_writer_create_memory), and a caller's write callback
// fed sequentially (zt_writer_create_callbacks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "container/sink.h"

namespace zt {

class MemorySink final : public Sink {
 public:
  MemorySink() = default;
  ~MemorySink() override;
  MemorySink(const MemorySink &) = delete;
  MemorySink &operator=(const MemorySink &) = delete;

  void write(const void *data, size_t len) override;
  void write_zeros(size_t len) override;
  void commit(bool) override;
  void abandon() noexcept override;
  // After commit: hands over the malloc'd bytes (freed with free/zt_free).
  // A file of 0 bytes cannot happen (the header alone is 8).
  uint8_t *take(size_t *len);

 private:
  uint8_t *reserve(size_t len);  // room for len more bytes
  uint8_t *data_ = nullptr;
  size_t capacity_ = 0;
  bool committed_ = false;
};

// The callback returns 0 when it took every byte, anything else to fail
// the writer.
using WriteCallback = int (*)(void *user, const void *data, size_t len);

class CallbackSink final : public Sink {
 public:
  CallbackSink(WriteCallback fn, void *user);
  void write(const void *data, size_t len) override;
  void write_zeros(size_t len) override;
  void commit(bool) override;
  void abandon() noexcept override;  // what was sent stays sent

  // Writes below this are gathered, so the callback sees few, large pieces.
  static constexpr size_t kBufferSize = size_t{64} << 10;

 private:
  void send(const void *data, size_t len);
  void flush();
  WriteCallback fn_;
  void *user_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t used_ = 0;
  uint64_t sent_ = 0;
  bool failed_ = false;
};

}  // namespace zt
