#include "container/memory_sink.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "util/error.h"
#include "ztensor.h"

namespace zt {

MemorySink::~MemorySink() {
  abandon();
}

uint8_t *MemorySink::reserve(size_t len) {
  if (committed_ || (!data_ && position_)) fail(ZT_E_MISUSE, "write after the memory file was finished");
  const size_t need = static_cast<size_t>(position_) + len;
  if (need < len) fail(ZT_E_NOMEM, "memory file larger than the address space");
  if (need > capacity_) {
    // Doubling: n bytes cost O(n) copies in all. realloc, not a vector, so
    // the buffer can be handed to the caller (zt_free) without a copy.
    size_t cap = std::max<size_t>(capacity_ ? capacity_ : 4096, 4096);
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    void *p = std::realloc(data_, cap);
    if (!p)
      fail(ZT_E_NOMEM, "cannot grow the memory file to " + std::to_string(cap) + " bytes (" +
                           std::to_string(position_) + " written)");
    data_ = static_cast<uint8_t *>(p);
    capacity_ = cap;
  }
  return data_ + position_;
}

void MemorySink::write(const void *data, size_t len) {
  if (!len) return;
  std::memcpy(reserve(len), data, len);
  position_ += len;
}

void MemorySink::write_zeros(size_t len) {
  if (!len) return;
  std::memset(reserve(len), 0, len);
  position_ += len;
}

void MemorySink::commit(bool) {
  if (committed_) fail(ZT_E_MISUSE, "memory file already finished");
  committed_ = true;
}

void MemorySink::abandon() noexcept {
  std::free(data_);
  data_ = nullptr;
  capacity_ = 0;
}

uint8_t *MemorySink::take(size_t *len) {
  if (!committed_ || !data_) fail(ZT_E_MISUSE, "the memory file is not finished, or was already taken");
  // Give back the slack of the last doubling (up to half the buffer).
  uint8_t *p = data_;
  if (capacity_ > position_) {
    if (void *q = std::realloc(data_, static_cast<size_t>(position_))) p = static_cast<uint8_t *>(q);
  }
  *len = static_cast<size_t>(position_);
  data_ = nullptr;
  capacity_ = 0;
  return p;
}

CallbackSink::CallbackSink(WriteCallback fn, void *user) : fn_(fn), user_(user), buffer_(new uint8_t[kBufferSize]) {
  if (!fn_) fail(ZT_E_INVALID_ARG, "the write callback is NULL");
}

void CallbackSink::send(const void *data, size_t len) {
  if (failed_) fail(ZT_E_IO, "the write callback failed earlier");
  if (!len) return;
  const int rc = fn_(user_, data, len);
  if (rc != 0) {
    failed_ = true;
    fail(ZT_E_IO, "the write callback returned " + std::to_string(rc) + " for bytes [" + std::to_string(sent_) + ", +" +
                      std::to_string(len) + ")");
  }
  sent_ += len;
}

void CallbackSink::flush() {
  const size_t n = used_;
  used_ = 0;
  send(buffer_.get(), n);
}

void CallbackSink::write(const void *data, size_t len) {
  if (len >= kBufferSize) {
    flush();
    send(data, len);
  } else if (len) {
    if (used_ + len > kBufferSize) flush();
    std::memcpy(buffer_.get() + used_, data, len);
    used_ += len;
  }
  position_ += len;
}

void CallbackSink::write_zeros(size_t len) {
  position_ += len;
  while (len > 0) {
    if (used_ == kBufferSize) flush();
    const size_t n = std::min(len, kBufferSize - used_);
    std::memset(buffer_.get() + used_, 0, n);
    used_ += n;
    len -= n;
  }
}

void CallbackSink::commit(bool) {
  flush();
}

void CallbackSink::abandon() noexcept {
  used_ = 0;
  failed_ = true;
}

}  // namespace zt
