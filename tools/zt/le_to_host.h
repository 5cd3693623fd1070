// The importers deliver little-endian elements (the foreign formats' order);
// the writer takes them in the host's order. On a big-endian host each
// element is reversed on the way, one split across two pieces carried over.
// On a little-endian host the pieces pass through untouched.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace ztcli {

inline constexpr bool kHostBigEndian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

class LeToHost {
 public:
  using Out = std::function<void(const void *, size_t)>;
  // elem_size: the storage element (a complex number's part); 1 = no swap.
  LeToHost(size_t elem_size, Out out) : esize_(kHostBigEndian ? elem_size : 1), out_(std::move(out)) {}
  void operator()(const void *data, size_t len) {
    if (esize_ <= 1) return out_(data, len);
    const auto *p = static_cast<const uint8_t *>(data);
    buf_.assign(carry_, carry_ + carry_len_);
    buf_.insert(buf_.end(), p, p + len);
    const size_t whole = buf_.size() - buf_.size() % esize_;
    for (size_t i = 0; i < whole; i += esize_) std::reverse(buf_.begin() + i, buf_.begin() + i + esize_);
    carry_len_ = buf_.size() - whole;
    std::memcpy(carry_, buf_.data() + whole, carry_len_);
    if (whole) out_(buf_.data(), whole);
  }
  // A partial last element goes out as it came (the writer then refuses
  // the size).
  void flush() {
    if (carry_len_) out_(carry_, carry_len_);
    carry_len_ = 0;
  }

 private:
  size_t esize_;
  Out out_;
  std::vector<uint8_t> buf_;
  uint8_t carry_[8];
  size_t carry_len_ = 0;
};

}  // namespace ztcli
