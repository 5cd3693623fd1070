#include "foreign/decode_on_read.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "foreign/foreign.h"
#include "platform/memory.h"
#include "util/error.h"

namespace zt {

DecodeOnReadSource::DecodeOnReadSource(const std::string &path, uint64_t size, std::vector<Tensor> tensors,
                                       Budget budget, std::shared_ptr<void> inputs)
    : inputs_(std::move(inputs)),
      tensors_(std::move(tensors)),
      state_(new std::atomic<uint8_t>[tensors_.size()]),
      failure_(tensors_.size()),
      budget_(std::move(budget)) {
  path_ = path;
  size_ = size;
  for (size_t i = 0; i < tensors_.size(); ++i) state_[i].store(tensors_[i].nbytes ? kPending : kReady);
  if (size == 0) return;
  if (size > std::numeric_limits<size_t>::max())
    fail(ZT_E_NOMEM, "'" + path + "': its tensors decode to " + std::to_string(size) + " bytes, more than this " +
                         std::to_string(8 * sizeof(size_t)) + "-bit process can address");
  // Address space only: pages are committed as tensors are decoded.
  void *p = platform::reserve_address_space(static_cast<size_t>(size));
  if (!p)
    fail(ZT_E_NOMEM, "'" + path + "': cannot reserve " + std::to_string(size) +
                         " bytes of address space for its tensors, which are decoded when read");
  base_ = static_cast<uint8_t *>(p);
  data_ = base_;
}

DecodeOnReadSource::~DecodeOnReadSource() {
  platform::release_address_space(base_, static_cast<size_t>(size_));
}

// The pages [at, at+len) spans: writable while a tensor is decoded into
// them, read-only after. A page shared with a neighbour (tensors are 64-byte
// aligned, not page-aligned) keeps that neighbour's bytes either way.
void DecodeOnReadSource::protect(uint64_t at, uint64_t len, bool writable) const {
  const uint64_t page = platform::page_size();
  const uint64_t begin = at / page * page, end = std::min(size_, (at + len + page - 1) / page * page);
  std::string why;
  if (!platform::set_pages_writable(base_ + begin, static_cast<size_t>(end - begin), writable, why))
    fail(ZT_E_NOMEM, "'" + path_ + "': cannot allocate " + std::to_string(len) + " bytes for a decoded tensor: " + why);
}

void DecodeOnReadSource::materialize(uint64_t offset, uint64_t len) const {
  if (len == 0 || tensors_.empty()) return;
  // The first tensor ending past `offset`: the last one starting at or before it.
  auto it = std::upper_bound(tensors_.begin(), tensors_.end(), offset,
                             [](uint64_t off, const Tensor &t) { return off < t.at; });
  size_t i = it == tensors_.begin() ? 0 : static_cast<size_t>(it - tensors_.begin()) - 1;
  for (; i < tensors_.size() && tensors_[i].at < offset + len; ++i) {
    if (state_[i].load(std::memory_order_acquire) == kReady) continue;
    if (tensors_[i].at + tensors_[i].nbytes <= offset) continue;  // the padding before the range
    decode(i);
  }
}

void DecodeOnReadSource::decode(size_t i) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Tensor &t = tensors_[i];
  const uint8_t st = state_[i].load(std::memory_order_acquire);
  if (st == kReady) return;
  if (st == kFailed) fail(ZT_E_FORMAT, failure_[i]);
  const std::string ctx = "'" + path_ + "': tensor '" + printable(t.name) + "'";
  if (t.nbytes > budget_.per_tensor)
    fail(ZT_E_LIMIT, ctx + " decodes to " + std::to_string(t.nbytes) + " bytes, more than max_decoded_size (" +
                         std::to_string(budget_.per_tensor) + "); raise it (zt --max-decoded-size)");
  if (t.nbytes > budget_.total - std::min(spent_, budget_.total))
    fail(ZT_E_LIMIT, ctx + " decodes to " + std::to_string(t.nbytes) + " bytes, which with the " +
                         std::to_string(spent_) + " already decoded from this file passes its bound of " +
                         std::to_string(budget_.total) + " bytes (" + budget_.rule +
                         "); raise it with zt_open_options.max_decoded_size (zt --max-decoded-size)");
  protect(t.at, t.nbytes, true);
  spent_ += t.nbytes;
  uint64_t got = 0;
  std::string error;
  try {
    t.emit([&](const void *p, size_t n) {
      if (n > t.nbytes - got) throw foreign::format_error(ctx + " delivers more bytes than it declares");
      std::memcpy(base_ + t.at + got, p, n);
      got += n;
    });
    if (got != t.nbytes)
      error = ctx + " delivers " + std::to_string(got) + " bytes, not the " + std::to_string(t.nbytes) + " it declares";
  } catch (const zt::Error &e) {
    if (e.status() != ZT_E_FORMAT) {  // I/O, memory: the next read tries again
      spent_ -= t.nbytes;
      protect(t.at, t.nbytes, false);
      throw;
    }
    error = e.what();
  } catch (...) {
    spent_ -= t.nbytes;
    protect(t.at, t.nbytes, false);
    throw;  // out of memory, I/O: the next read tries again
  }
  protect(t.at, t.nbytes, false);
  if (!error.empty()) {
    failure_[i] = error;
    state_[i].store(kFailed, std::memory_order_release);
    fail(ZT_E_FORMAT, error);
  }
  state_[i].store(kReady, std::memory_order_release);
}

void DecodeOnReadSource::read(uint64_t offset, size_t len, void *dst) const {
  // A copy-read of one whole tensor not decoded yet: decoded straight into
  // the caller's buffer, not kept (one copy fewer; nothing counted against
  // the budget, which bounds what the file holds). Views and partial reads
  // keep the decoded copy.
  if (len && !tensors_.empty()) {
    auto it = std::lower_bound(tensors_.begin(), tensors_.end(), offset,
                               [](const Tensor &t, uint64_t off) { return t.at < off; });
    if (it != tensors_.end() && it->at == offset && it->nbytes == len) {
      const size_t i = static_cast<size_t>(it - tensors_.begin());
      if (state_[i].load(std::memory_order_acquire) == kPending && decode_into(i, static_cast<uint8_t *>(dst))) return;
    }
  }
  materialize(offset, len);
  if (len) std::memcpy(dst, base_ + offset, len);
}

bool DecodeOnReadSource::decode_into(size_t i, uint8_t *dst) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Tensor &t = tensors_[i];
  if (state_[i].load(std::memory_order_acquire) != kPending) return false;  // decoded (or failed) meanwhile
  const std::string ctx = "'" + path_ + "': tensor '" + printable(t.name) + "'";
  if (t.nbytes > budget_.per_tensor)
    fail(ZT_E_LIMIT, ctx + " decodes to " + std::to_string(t.nbytes) + " bytes, more than max_decoded_size (" +
                         std::to_string(budget_.per_tensor) + "); raise it (zt --max-decoded-size)");
  uint64_t got = 0;
  std::string error;
  try {
    t.emit([&](const void *p, size_t n) {
      if (n > t.nbytes - got) throw foreign::format_error(ctx + " delivers more bytes than it declares");
      std::memcpy(dst + got, p, n);
      got += n;
    });
    if (got != t.nbytes)
      error = ctx + " delivers " + std::to_string(got) + " bytes, not the " + std::to_string(t.nbytes) + " it declares";
  } catch (const zt::Error &e) {
    if (e.status() != ZT_E_FORMAT) throw;
    error = e.what();
  }
  if (!error.empty()) {
    failure_[i] = error;
    state_[i].store(kFailed, std::memory_order_release);
    fail(ZT_E_FORMAT, error);
  }
  return true;
}

const uint8_t *DecodeOnReadSource::read_meta(uint64_t offset, size_t len, std::vector<uint8_t> &) const {
  materialize(offset, len);
  return base_ + offset;
}

uint64_t DecodeOnReadSource::decoded_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spent_;
}

}  // namespace zt
