// ByteSwapFeed and byteswapped_copy: what a big-endian host's writer passes
// blobs through. Tested on any host, since they swap whatever the host.
#include "types/host_order.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 1);
  return v;
}

std::vector<uint8_t> swapped(std::vector<uint8_t> v, size_t es) {
  for (size_t i = 0; i + es <= v.size(); i += es)
    for (size_t a = i, b = i + es - 1; a < b; ++a, --b) std::swap(v[a], v[b]);
  return v;
}

std::vector<uint8_t> feed_in_pieces(const std::vector<uint8_t> &in, size_t es, size_t piece) {
  zt::ByteSwapFeed feed(es);
  std::vector<uint8_t> out;
  auto sink = [&](const uint8_t *p, size_t n) { out.insert(out.end(), p, p + n); };
  for (size_t off = 0; off < in.size(); off += piece)
    feed.feed(in.data() + off, std::min(piece, in.size() - off), sink);
  feed.flush(sink);
  return out;
}

}  // namespace

TEST(HostOrder, FeedSwapsElementsSplitAcrossPieces) {
  for (size_t es : {2, 4, 8}) {
    const auto in = pattern(es * 37);
    for (size_t piece : {size_t{1}, size_t{3}, size_t{5}, es, es * 37}) {
      SCOPED_TRACE("element " + std::to_string(es) + ", piece " + std::to_string(piece));
      EXPECT_EQ(feed_in_pieces(in, es, piece), swapped(in, es));
    }
  }
}

TEST(HostOrder, FeedPassesATrailingPartialElementThrough) {
  auto in = pattern(4 * 5 + 3);
  auto want = swapped(std::vector<uint8_t>(in.begin(), in.end() - 3), 4);
  want.insert(want.end(), in.end() - 3, in.end());
  EXPECT_EQ(feed_in_pieces(in, 4, 6), want);
}

TEST(HostOrder, FeedHandlesPiecesLargerThanItsBuffer) {
  const auto in = pattern((size_t{3} << 20) + 8);
  EXPECT_EQ(feed_in_pieces(in, 8, in.size()), swapped(in, 8));
}

TEST(HostOrder, ByteswappedCopyReversesEachElement) {
  const uint32_t v[2] = {0x11223344u, 0xA0B0C0D0u};
  auto copy = zt::byteswapped_copy(v, sizeof v, 4);
  uint32_t back[2];
  std::memcpy(back, copy.data(), 8);
  EXPECT_EQ(back[0], 0x44332211u);
  EXPECT_EQ(back[1], 0xD0C0B0A0u);
}
