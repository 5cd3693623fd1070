#include "io/callback_source.h"

#include <algorithm>
#include <vector>

#include "platform/thread_cache.h"
#include "util/error.h"

namespace zt {
namespace {

// Set while a callback runs on this thread: zt_io_set_error is honoured only
// then, so a stray call elsewhere cannot leak text into another failure.
thread_local bool t_in_callback = false;
// The text of the last zt_io_set_error on this thread (thread_cache: not a
// thread_local std::string, whose destructor a Windows DLL cannot run
// safely at thread exit).
struct CallbackErrorTag;
std::string *callback_error() noexcept {
  return thread_cache<std::string, CallbackErrorTag>();
}

class CallbackScope {
 public:
  CallbackScope() {
    t_in_callback = true;
    if (std::string *e = callback_error()) e->clear();
  }
  ~CallbackScope() { t_in_callback = false; }
};

std::string range_text(uint64_t offset, size_t len) {
  return "[" + std::to_string(offset) + ", +" + std::to_string(len) + ")";
}

// A callback's own error status is kept when it is one of ours (negative);
// anything else it returns is reported as an I/O error.
zt_status failure_status(zt_status st) {
  return st < 0 ? st : ZT_E_IO;
}

class CallbackSource final : public Source {
 public:
  explicit CallbackSource(const zt_io &io) : io_(io) {
    path_ = io.name ? printable(io.name) : std::string("<io>");
    size_ = io.size;
  }
  ~CallbackSource() override {
    if (io_.close) io_.close(io_.user);
  }

  void read(uint64_t offset, size_t len, void *dst) const override {
    auto *p = static_cast<uint8_t *>(dst);
    for (size_t done = 0; done < len;) {
      const size_t want = len - done;
      size_t got = 0;
      zt_status st;
      {
        CallbackScope scope;
        st = io_.read_at(io_.user, offset + done, want, p + done, &got);
      }
      if (st != ZT_OK) fail_callback("read_at", st, offset + done, want);
      if (got > want)
        fail(ZT_E_IO, "'" + path_ + "': read_at" + range_text(offset + done, want) + " reported " +
                          std::to_string(got) + " bytes, more than asked");
      if (got == 0)
        fail(ZT_E_IO, "'" + path_ + "': short read: read_at" + range_text(offset + done, want) +
                          " returned no bytes (the source ends before its declared size " + std::to_string(size_) +
                          ")");
      done += got;
    }
  }

  void read_pieces(uint64_t offset, const Piece *pieces, size_t n) const override {
    if (!io_.read_at_v) {
      Source::read_pieces(offset, pieces, n);
      return;
    }
    std::vector<zt_io_range> ranges;
    ranges.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (pieces[i].dst && pieces[i].len) ranges.push_back({offset, pieces[i].len, pieces[i].dst, 0});
      offset += pieces[i].len;
    }
    if (ranges.empty()) return;
    zt_status st;
    {
      CallbackScope scope;
      st = io_.read_at_v(io_.user, ranges.data(), ranges.size());
    }
    if (st != ZT_OK)
      fail_callback("read_at_v", st, ranges.front().offset,
                    static_cast<size_t>(ranges.back().offset + ranges.back().len - ranges.front().offset));
    // What the vectored call left short is completed (or found truncated)
    // one range at a time.
    for (const zt_io_range &r : ranges) {
      if (r.out_len > r.len)
        fail(ZT_E_IO, "'" + path_ + "': read_at_v range " + range_text(r.offset, r.len) + " reported " +
                          std::to_string(r.out_len) + " bytes, more than asked");
      if (r.out_len < r.len) read(r.offset + r.out_len, r.len - r.out_len, static_cast<uint8_t *>(r.dst) + r.out_len);
    }
  }

 private:
  [[noreturn]] void fail_callback(const char *which, zt_status st, uint64_t offset, size_t len) const {
    std::string msg = "'" + path_ + "': " + which + range_text(offset, len) + " failed with " +
                      zt_status_str(failure_status(st)) + " (status " + std::to_string(static_cast<int>(st)) + ")";
    const std::string *e = callback_error();
    if (e && !e->empty()) msg += ": " + *e;
    fail(failure_status(st), msg);
  }

  zt_io io_;
};

}  // namespace

void set_callback_error(const char *message) {
  if (!t_in_callback) return;
  std::string *e = callback_error();
  if (!e) return;
  try {
    *e = message ? message : "";
  } catch (const std::bad_alloc &) {  // a callback's text is not worth failing for
    e->clear();
  }
}

std::unique_ptr<Source> open_callback_source(const zt_io &io) {
  std::unique_ptr<CallbackSource> s;
  try {
    s = std::make_unique<CallbackSource>(io);
  } catch (...) {
    if (io.close) io.close(io.user);  // the caller handed it over
    throw;
  }
  return s;
}

}  // namespace zt
