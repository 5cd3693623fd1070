// zt.zstd-seekable/1 decoding (spec/profiles/zt.zstd-seekable-1.md): streams
// from our own encoder decode exactly, a range decodes only the frames it
// touches, and every profile rule and hostile seek table is refused naming
// the rule (Encoding).
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <string>
#include <vector>

#include "util/error.h"
#include "v2/zstd_seekable_decode.h"
#include "v2/zstd_seekable_encode.h"

using zt::v2::ZstdSeekableDecoder;
using zt::v2::ZstdSeekableEncoder;

namespace {

constexpr size_t kF = ZstdSeekableEncoder::kFrameContent;

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    v[i] = static_cast<uint8_t>((i % 97 < 60) ? i / 7 : x >> 24);
  }
  return v;
}

std::vector<uint8_t> encode(const std::vector<uint8_t> &in) {
  std::vector<uint8_t> out;
  auto emit = [&](const uint8_t *p, size_t n) { out.insert(out.end(), p, p + n); };
  ZstdSeekableEncoder e(3);
  e.update(in.data(), in.size(), emit);
  e.finish(emit);
  return out;
}

ZstdSeekableDecoder::ReadAt over(const std::vector<uint8_t> &s) {
  return [&s](uint64_t off, size_t len, uint8_t *dst) {
    ASSERT_LE(off + len, s.size());
    std::memcpy(dst, s.data() + off, len);
  };
}

void put32(std::vector<uint8_t> &s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// The rejection message when opening `s` (decoded_length `dl`) and reading
// everything; "" when it decodes.
std::string refusal(const std::vector<uint8_t> &s, uint64_t dl) {
  try {
    ZstdSeekableDecoder d(over(s), s.size(), dl, "'t.zt': object 'w', component 'data'");
    std::vector<uint8_t> out(dl);
    d.read(0, dl, out.data());
    return "";
  } catch (const zt::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_CORRUPT) << e.what();
    return e.what();
  }
}

TEST(V2ZstdSeekable, DecodesWhatTheEncoderWrote) {
  for (size_t n : {size_t{0}, size_t{1}, kF - 1, kF, kF + 1, 3 * kF + 12345}) {
    auto in = pattern(n);
    auto s = encode(in);
    ZstdSeekableDecoder d(over(s), s.size(), n, "ctx");
    EXPECT_EQ(d.frames(), (n + kF - 1) / kF);
    std::vector<uint8_t> out(n);
    d.read(0, n, out.data());
    EXPECT_EQ(out, in) << n;
  }
}

TEST(V2ZstdSeekable, RangeDecodesOnlyTheFramesItTouches) {
  const size_t n = 8 * kF + 777;
  auto in = pattern(n);
  auto s = encode(in);
  ZstdSeekableDecoder d(over(s), s.size(), n, "ctx");
  ASSERT_EQ(d.frames(), 9u);
  std::vector<uint8_t> out(kF);
  // Inside frame 5 only.
  d.read(5 * kF + 10, 1000, out.data());
  EXPECT_EQ(0, std::memcmp(out.data(), in.data() + 5 * kF + 10, 1000));
  EXPECT_EQ(d.frames_decoded(), 1u);
  // Straddling frames 2 and 3: two frames.
  d.read(3 * kF - 100, 200, out.data());
  EXPECT_EQ(0, std::memcmp(out.data(), in.data() + 3 * kF - 100, 200));
  EXPECT_EQ(d.frames_decoded(), 3u);
  // The short last frame, to the end.
  d.read(n - 500, 500, out.data());
  EXPECT_EQ(0, std::memcmp(out.data(), in.data() + n - 500, 500));
  EXPECT_EQ(d.frames_decoded(), 4u);
  // Past the end: a range error, nothing decoded.
  EXPECT_THROW(d.read(n - 10, 11, out.data()), zt::Error);
  EXPECT_EQ(d.frames_decoded(), 4u);
}

TEST(V2ZstdSeekable, DecodedLengthMustBeExact) {
  auto in = pattern(2 * kF + 5);
  auto s = encode(in);
  EXPECT_EQ(refusal(s, in.size()), "");
  EXPECT_NE(refusal(s, in.size() + 1).find("rejected (Encoding)"), std::string::npos);
  EXPECT_NE(refusal(s, in.size() - 1).find("not the part's decoded_length"), std::string::npos);
}

TEST(V2ZstdSeekable, HostileSeekTablesAreRefused) {
  const size_t n = 3 * kF + 100;
  auto in = pattern(n);
  const auto good = encode(in);
  const size_t foot = good.size() - 9, table = good.size() - (8 + 4 * 8 + 9);  // 4 frames
  auto with = [&](auto edit) {
    auto s = good;
    edit(s);
    return refusal(s, n);
  };
  // A count of 2^32 - 1 frames: refused before a table of 34 GiB is read.
  EXPECT_NE(with([&](auto &s) { put32(s, foot, 0xffffffffu); }).find("larger than the"), std::string::npos);
  EXPECT_NE(with([&](auto &s) { put32(s, foot, 3); }).find("seek table"), std::string::npos);
  EXPECT_NE(with([&](auto &s) { put32(s, foot + 5, 0x8F92EAB0u); }).find("magic"), std::string::npos);
  EXPECT_NE(with([&](auto &s) { s[foot + 4] = 0x04; }).find("reserved bits"), std::string::npos);
  EXPECT_NE(with([&](auto &s) { put32(s, table, 0x184D2A50u); }).find("skippable"), std::string::npos);
  EXPECT_NE(with([&](auto &s) { put32(s, table + 4, 0); }).find("frame size"), std::string::npos);
  // Compressed sizes that lie (the frames no longer tile the stream).
  EXPECT_NE(with([&](auto &s) { put32(s, table + 8, 0xffffffffu); }).find("cover"), std::string::npos);
  // Unequal frames: frame 1 says kF + 1, the last kF - 1 (the sum still right).
  EXPECT_NE(with([&](auto &s) {
              put32(s, table + 8 + 8 + 4, kF + 1);
              put32(s, table + 8 + 16 + 4, kF - 1);
            }).find("all frames but the last"),
            std::string::npos);
  // Frame content above 16 MiB.
  EXPECT_NE(with([&](auto &s) { put32(s, table + 8 + 4, (16u << 20) + 1); }).find("16 MiB"), std::string::npos);
  // A last frame larger than the others.
  EXPECT_NE(with([&](auto &s) { put32(s, table + 8 + 24 + 4, kF + 1); }).find("more than the"), std::string::npos);
  // A compressed-size boundary moved by one: frames 0 and 1 are no longer
  // exactly one zstd frame each.
  EXPECT_NE(with([&](auto &s) {
              uint32_t c0 = s[table + 8] | s[table + 9] << 8 | s[table + 10] << 16 | s[table + 11] << 24;
              uint32_t c1 = s[table + 16] | s[table + 17] << 8 | s[table + 18] << 16 | s[table + 19] << 24;
              put32(s, table + 8, c0 + 1);
              put32(s, table + 16, c1 - 1);
            }).find("frame 0"),
            std::string::npos);
  // A zero count: the empty table covers none of the frames before it.
  EXPECT_NE(with([&](auto &s) {
              s.erase(s.begin() + table, s.end() - 9);
              s.insert(s.end() - 9, {0x5E, 0x2A, 0x4D, 0x18, 9, 0, 0, 0});
              put32(s, s.size() - 9, 0);
            }).find("frames cover 0 bytes"),
            std::string::npos);
}

TEST(V2ZstdSeekable, DamagedFrameIsCaughtByItsChecksum) {
  const size_t n = 2 * kF;
  auto in = pattern(n);
  auto s = encode(in);
  // The last 4 bytes of frame 0 are its checksum; flip one.
  ZstdSeekableDecoder d(over(s), s.size(), n, "ctx");
  const uint32_t c0 =
      s[s.size() - 9 - 16] | s[s.size() - 9 - 15] << 8 | s[s.size() - 9 - 14] << 16 | s[s.size() - 9 - 13] << 24;
  s[c0 - 1] ^= 1;
  auto msg = refusal(s, n);
  EXPECT_NE(msg.find("frame 0 does not decode"), std::string::npos) << msg;
}

TEST(V2ZstdSeekable, FrameWithoutChecksumIsRefused) {
  const size_t n = 1000;
  auto in = pattern(n);
  std::vector<uint8_t> frame(ZSTD_compressBound(n));
  ZSTD_CCtx *c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);
  frame.resize(ZSTD_compress2(c, frame.data(), frame.size(), in.data(), n));
  ZSTD_freeCCtx(c);
  std::vector<uint8_t> s = frame;
  s.resize(frame.size() + 8 + 8 + 9);
  size_t t = frame.size();
  put32(s, t, 0x184D2A5E);
  put32(s, t + 4, 8 + 9);
  put32(s, t + 8, static_cast<uint32_t>(frame.size()));
  put32(s, t + 12, n);
  put32(s, t + 16, 1);
  s[t + 20] = 0;
  put32(s, t + 21, 0x8F92EAB1u);
  EXPECT_NE(refusal(s, n).find("no content checksum"), std::string::npos) << refusal(s, n);
}

// Every byte of the seek table and of the frame headers changed: either
// refused with a zt::Error or decoded to exactly the original bytes, never
// a crash or other bytes (run under ASan by the sanitizer build).
TEST(V2ZstdSeekable, EveryTableByteChangedIsRefusedOrHarmless) {
  const size_t n = 3 * kF + 100;
  const auto in = pattern(n);
  const auto good = encode(in);
  const size_t table = good.size() - (8 + 4 * 8 + 9);
  std::vector<size_t> spots;
  for (size_t i = table; i < good.size(); ++i) spots.push_back(i);
  for (size_t i = 0; i < 16; ++i) spots.push_back(i);  // frame 0's header
  size_t refused = 0;
  for (size_t at : spots)
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      auto s = good;
      s[at] ^= x;
      try {
        ZstdSeekableDecoder d(over(s), s.size(), n, "ctx");
        std::vector<uint8_t> out(n);
        d.read(0, n, out.data());
        EXPECT_TRUE(out == in) << "byte " << at << " ^ " << int(x) << " decoded to other bytes";
      } catch (const zt::Error &) {
        ++refused;
      }
    }
  EXPECT_GT(refused, spots.size());  // nearly every change is caught
}

}  // namespace
