#include "types/host_order.h"

#include <algorithm>
#include <cstring>

#include "codec/codec.h"

namespace zt {
namespace {

constexpr size_t kPiece = size_t{1} << 20;  // bounded memory whatever the append size

}  // namespace

ByteSwapFeed::ByteSwapFeed(size_t elem_size) : esize_(elem_size) {}

void ByteSwapFeed::feed(const void *data, size_t len, const Out &out) {
  const auto *p = static_cast<const uint8_t *>(data);
  if (carry_len_) {  // complete the element the last piece began
    const size_t take = std::min(esize_ - carry_len_, len);
    std::memcpy(carry_ + carry_len_, p, take);
    carry_len_ += take;
    p += take;
    len -= take;
    if (carry_len_ < esize_) return;
    byteswap_inplace(carry_, esize_, esize_);
    out(carry_, esize_);
    carry_len_ = 0;
  }
  const size_t whole = len - len % esize_;
  for (size_t done = 0; done < whole;) {
    const size_t n = std::min(whole - done, kPiece - kPiece % esize_);
    buf_.assign(p + done, p + done + n);
    byteswap_inplace(buf_.data(), n, esize_);
    out(buf_.data(), n);
    done += n;
  }
  carry_len_ = len - whole;
  if (carry_len_) std::memcpy(carry_, p + whole, carry_len_);
}

void ByteSwapFeed::flush(const Out &out) {
  if (carry_len_) out(carry_, carry_len_);
  carry_len_ = 0;
}

std::vector<uint8_t> byteswapped_copy(const void *data, size_t len, size_t elem_size) {
  const auto *p = static_cast<const uint8_t *>(data);
  std::vector<uint8_t> v(p, p + len);
  byteswap_inplace(v.data(), len, elem_size);
  return v;
}

}  // namespace zt
