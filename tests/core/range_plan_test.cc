// The range cost model (src/io/range_plan.h): which gaps are fetched to save
// requests, within the overfetch and length bounds, and what the link model
// learns from responses; and the multi-range answer's parser
// (src/io/multipart.h).
#include "io/range_plan.h"

#include <gtest/gtest.h>

#include <random>

#include "io/multipart.h"

using zt::LinkModel;
using zt::merge_ranges;
using zt::MergedRange;
using zt::MergeLimits;
using zt::NeededRange;

namespace {

std::vector<MergedRange> merge(const std::vector<NeededRange> &r, uint64_t max_gap, uint64_t waste,
                               uint64_t max_len = 0) {
  MergeLimits lim;
  lim.max_gap = max_gap;
  lim.max_waste = waste;
  lim.max_len = max_len;
  std::vector<size_t> order;
  return merge_ranges(r, lim, order);
}

TEST(RangePlan, NothingMergedWhenGapsCostMore) {
  auto m = merge({{0, 100}, {200, 100}, {400, 100}}, 99, 1000);
  ASSERT_EQ(m.size(), 3u);
}

TEST(RangePlan, NarrowestGapsFirstWithinTheBudget) {
  // gaps: 50, 10, 30; a budget of 45 takes 10 and 30, not 50.
  auto m = merge({{0, 100}, {150, 100}, {260, 100}, {390, 100}}, 1000, 45);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].offset, 0u);
  EXPECT_EQ(m[0].len, 100u);
  EXPECT_EQ(m[1].offset, 150u);
  EXPECT_EQ(m[1].len, 340u);
  EXPECT_EQ(m[1].first, 1u);
  EXPECT_EQ(m[1].last, 3u);
}

TEST(RangePlan, LengthBoundAndOverlapsRespected) {
  auto m = merge({{0, 100}, {110, 100}, {220, 100}}, 1000, 1000, 250);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].len, 210u);
  auto o = merge({{0, 100}, {50, 100}}, 1000, 1000);
  EXPECT_EQ(o.size(), 2u);
}

TEST(RangePlan, AnyOrderIn) {
  MergeLimits lim;
  lim.max_gap = 10;
  lim.max_waste = 100;
  std::vector<size_t> order;
  auto m = merge_ranges({{300, 10}, {0, 10}, {15, 10}}, lim, order);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(order[0], 1u);
  EXPECT_EQ(order[1], 2u);
  EXPECT_EQ(order[2], 0u);
  EXPECT_EQ(m[0].offset, 0u);
  EXPECT_EQ(m[0].len, 25u);
  EXPECT_EQ(m[1].offset, 300u);
}

TEST(RangePlan, ManyRangesNLogN) {
  std::vector<NeededRange> r;
  for (uint64_t i = 0; i < 200000; ++i) r.push_back({i * 4096, 1024});
  auto m = merge(r, 4096, 3072 * 1000);
  EXPECT_EQ(m.size(), r.size() - 1000);
}

TEST(LinkModel, FixedFiguresGiveTheGap) {
  LinkModel l(20, 100000000);  // 20 ms, 100 MB/s
  EXPECT_EQ(l.worthwhile_gap(1), 2000000u);
  EXPECT_EQ(l.worthwhile_gap(16), 125000u);
  l.observe(0.5, 10 << 20, 1.0);  // fixed: not moved
  EXPECT_DOUBLE_EQ(l.rtt_s(), 0.02);
}

TEST(LinkModel, LearnsFromResponses) {
  LinkModel l(0, 0);
  EXPECT_DOUBLE_EQ(l.rtt_s(), LinkModel::kDefaultRtt);
  l.observe(0.030, 100, 0.0001);  // small body: the round trip only
  EXPECT_DOUBLE_EQ(l.rtt_s(), 0.030);
  EXPECT_DOUBLE_EQ(l.bytes_per_s(), LinkModel::kDefaultRate);
  l.observe(0.030, 1 << 20, 0.01);
  EXPECT_NEAR(l.bytes_per_s(), (1 << 20) / 0.01, 1);
  // Large reads: spread over the connections in one wave, 1 MiB to max_chunk.
  EXPECT_EQ(l.chunk_for(uint64_t{256} << 20, 16, 8 << 20), 8u << 20);
  EXPECT_EQ(l.chunk_for(16 << 20, 16, 8 << 20), 1u << 20);
  EXPECT_EQ(l.chunk_for(3 << 20, 16, 8 << 20), 1u << 20);
  // Two waves of equal pieces, not one full wave and a short one.
  EXPECT_EQ(l.chunk_for(uint64_t{17} << 20, 1, 16 << 20), uint64_t{17} << 19);
  EXPECT_EQ(l.chunk_for(uint64_t{260} << 20, 16, 16 << 20), 8519680u);  // ceil(260 MiB / 32)
}

TEST(LinkModel, ChunkCapFollowsTheLinkUnlessSet) {
  // 32 round trips' worth of one connection, within 8..64 MiB.
  EXPECT_NEAR(static_cast<double>(LinkModel(10, 100000000).chunk_cap(0)), 32e6, 2);  // 10 ms, 100 MB/s
  EXPECT_EQ(LinkModel(25, 125000000).chunk_cap(0), 64u << 20);                       // 1 Gbit/s, 25 ms: the top
  EXPECT_EQ(LinkModel(1, 125000000).chunk_cap(0), 8u << 20);                         // a datacenter: the floor
  // The caller's chunk_bytes is a hard cap, whatever the link.
  EXPECT_EQ(LinkModel(80, 25000000).chunk_cap(2 << 20), 2u << 20);
  // Measured: 20 ms, 25 MB/s.
  LinkModel l(0, 0);
  l.observe(0.020, 100, 0.0001);
  l.observe(0.020, 4 << 20, 4.0 * (1 << 20) / 25e6);
  EXPECT_NEAR(static_cast<double>(l.chunk_cap(0)), 16e6, 1e3);
}

TEST(LinkModel, ConnectionsFollowTheLinkWithinTheCap) {
  constexpr uint64_t MiB = uint64_t{1} << 20;
  // 80 ms, 25 MB/s per connection: each connection streams at least
  // 4 round trips' worth (8 MB) and 250 ms (6.25 MB): 256 MiB -> 33.
  const LinkModel wan(80, 25000000);
  EXPECT_EQ(wan.connections_for(256 * MiB, 16, 64), 33u);
  EXPECT_EQ(wan.connections_for(2048 * MiB, 16, 64), 64u);  // the cap
  EXPECT_EQ(wan.connections_for(64 * MiB, 16, 64), 16u);    // never below the default
  EXPECT_EQ(wan.connections_for(256 * MiB, 16, 16), 16u);   // a cap below the link's figure
  EXPECT_EQ(wan.connections_for(256 * MiB, 40, 16), 16u);   // the cap wins over the base
  // Loopback (0.1 ms, 1 GB/s): 250 ms of streaming is 250 MB a connection.
  EXPECT_EQ(LinkModel(0, 1000000000).connections_for(2048 * MiB, 16, 64), 16u);
  // Nothing measured yet (2 ms and 100 MB/s assumed), or only the round
  // trip: the default, whatever the length.
  LinkModel l(0, 0);
  EXPECT_EQ(l.connections_for(2048 * MiB, 16, 64), 16u);
  l.observe(0.080, 100, 0.0001);
  EXPECT_EQ(l.connections_for(2048 * MiB, 16, 64), 16u);
  // The rate measured (25 MB/s): the link's figure.
  l.observe(0.080, 4 << 20, 4.0 * (1 << 20) / 25e6);
  EXPECT_EQ(l.connections_for(256 * MiB, 16, 64), 33u);
}

TEST(LinkModel, ConnectionsGrowWhileTheThroughputRises) {
  constexpr uint64_t MiB = uint64_t{1} << 20;
  LinkModel l(80, 25000000);
  EXPECT_EQ(l.connections_for(2048 * MiB, 16, 64), 64u);  // no bulk read seen yet
  // A load on 16 connections at 400 MB/s: the next may use twice as many.
  l.observe_bulk(16, 2048 * MiB, 2048 * MiB / 400e6);
  EXPECT_EQ(l.connections_for(2048 * MiB, 16, 64), 32u);
  // 32 moved 760 MB/s (more than 1.1x): 64 next.
  l.observe_bulk(32, 2048 * MiB, 2048 * MiB / 760e6);
  EXPECT_EQ(l.connections_for(2048 * MiB, 16, 64), 64u);
  // 64 moved 800 MB/s, not 1.1x more: the link's total is the limit,
  // 32 it stays, for any length.
  l.observe_bulk(64, 2048 * MiB, 2048 * MiB / 800e6);
  EXPECT_EQ(l.connections_for(2048 * MiB, 16, 64), 32u);
  EXPECT_EQ(l.connections_for(8192 * MiB, 16, 64), 32u);
  EXPECT_EQ(l.connections_for(64 * MiB, 16, 64), 16u);
  // Small reads are no evidence either way.
  LinkModel m(80, 25000000);
  m.observe_bulk(16, 16 * MiB, 0.1);
  EXPECT_EQ(m.connections_for(2048 * MiB, 16, 64), 64u);
}

TEST(ApportionPieces, OnePiecePerConnectionSharedBySize) {
  using zt::apportion_pieces;
  constexpr uint64_t MiB = uint64_t{1} << 20;
  auto total = [](const std::vector<uint64_t> &c) {
    uint64_t n = 0;
    for (uint64_t x : c) n += x;
    return n;
  };
  auto largest = [](const std::vector<uint64_t> &lens, const std::vector<uint64_t> &c) {
    uint64_t m = 0;
    for (size_t i = 0; i < lens.size(); ++i) m = std::max(m, (lens[i] + c[i] - 1) / c[i]);
    return m;
  };
  // Runs like the `mixed` load's (65 + 4 x 48 MiB) over 16 connections:
  // 16 pieces, none over 16.25 MiB. (Cut by a common piece size,
  // ceil(257 MiB / 16), they made 17: a 1 MiB remainder of the first run
  // was a second wave on one connection.)
  const std::vector<uint64_t> mixed = {65 * MiB, 48 * MiB, 48 * MiB, 48 * MiB, 48 * MiB};
  const auto c = apportion_pieces(mixed, 16, 64 * MiB);
  EXPECT_EQ(c, (std::vector<uint64_t>{4, 3, 3, 3, 3}));
  EXPECT_EQ(total(c), 16u);
  EXPECT_LE(largest(mixed, c), 65 * MiB / 4 + 1);
  // One range: exactly `parallel` equal pieces.
  EXPECT_EQ(apportion_pieces({256 * MiB}, 33, 64 * MiB), std::vector<uint64_t>{33});
  // The cap: 2 GiB over 16 connections within 64 MiB pieces: 2 waves.
  EXPECT_EQ(apportion_pieces({2048 * MiB}, 16, 64 * MiB), std::vector<uint64_t>{32});
  EXPECT_EQ(apportion_pieces({2048 * MiB}, 16, 200 * MiB), std::vector<uint64_t>{16});
  // No piece under 1 MiB: 3 MiB is 3 pieces whatever the connections.
  EXPECT_EQ(apportion_pieces({3 * MiB}, 16, 64 * MiB), std::vector<uint64_t>{3});
  EXPECT_EQ(apportion_pieces({MiB + 5}, 16, 64 * MiB), std::vector<uint64_t>{1});
  // More ranges than connections: one piece each (the cap permitting).
  const std::vector<uint64_t> many(40, 2 * MiB);
  EXPECT_EQ(total(apportion_pieces(many, 16, 64 * MiB)), 40u);
  const std::vector<uint64_t> big(3, 200 * MiB);
  EXPECT_EQ(apportion_pieces(big, 1, 64 * MiB), (std::vector<uint64_t>{4, 4, 4}));
  EXPECT_TRUE(apportion_pieces({}, 16, 64 * MiB).empty());
}

}  // namespace

namespace {

using zt::multipart_boundary;
using zt::MultipartRanges;
using zt::RangePart;

std::string part(const char *range, const std::string &bytes) {
  return "\r\n--B\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes " + std::string(range) +
         "/100\r\n\r\n" + bytes;
}

TEST(Multipart, BoundaryFromContentType) {
  EXPECT_EQ(multipart_boundary("multipart/byteranges; boundary=00000000001"), "00000000001");
  EXPECT_EQ(multipart_boundary("Multipart/ByteRanges; boundary=\"a b\""), "a b");
  EXPECT_EQ(multipart_boundary("application/octet-stream"), "");
}

TEST(Multipart, PartsToTheirBuffers) {
  uint8_t a[3] = {}, b[2] = {};
  std::vector<RangePart> parts{{10, 3, a}, {50, 2, b}};
  const std::string body = part("10-12", "xyz") + part("50-51", "pq") + "\r\n--B--\r\n";
  // Fed a byte at a time: no boundary of libcurl's chunks matters.
  MultipartRanges m(parts, "B");
  for (char c : body) ASSERT_TRUE(m.feed(&c, 1)) << m.error();
  EXPECT_TRUE(m.complete());
  EXPECT_EQ(std::string(reinterpret_cast<char *>(a), 3), "xyz");
  EXPECT_EQ(std::string(reinterpret_cast<char *>(b), 2), "pq");
  EXPECT_EQ(m.data_bytes(), 5u);
}

TEST(Multipart, WrongRangeMissingPartsAndExtraPartsRefused) {
  uint8_t a[3] = {}, b[2] = {};
  std::vector<RangePart> parts{{10, 3, a}, {50, 2, b}};
  MultipartRanges wrong(parts, "B");
  const std::string w = part("11-13", "xyz");
  EXPECT_FALSE(wrong.feed(w.data(), w.size()));
  EXPECT_NE(wrong.error().find("not the range asked"), std::string::npos);
  MultipartRanges shortm(parts, "B");
  const std::string s = part("10-12", "xyz") + "\r\n--B--\r\n";
  EXPECT_FALSE(shortm.feed(s.data(), s.size()));
  MultipartRanges cut(parts, "B");
  const std::string c = part("10-12", "xyz") + part("50-51", "p");
  EXPECT_TRUE(cut.feed(c.data(), c.size()));
  EXPECT_FALSE(cut.complete());
  std::vector<RangePart> one{{10, 3, a}};
  MultipartRanges extra(one, "B");
  const std::string e = part("10-12", "xyz") + part("50-51", "pq");
  EXPECT_FALSE(extra.feed(e.data(), e.size()));
  MultipartRanges endless(parts, "B");
  const std::string l = "\r\n--B\r\n" + std::string(9000, 'h');
  EXPECT_FALSE(endless.feed(l.data(), l.size()));
}

TEST(Multipart, HostileBytesNeverOverrun) {
  // Random mutations of a good body, fed in random pieces: the parser
  // writes only inside the parts' buffers (the sanitizer builds check)
  // and either completes with the right bytes or refuses.
  std::mt19937 rng(9);
  const std::string good = part("10-12", "xyz") + part("50-51", "pq") + "\r\n--B--\r\n";
  for (int round = 0; round < 2000; ++round) {
    std::string body = good;
    for (int m = rng() % 4; m-- > 0;) body[rng() % body.size()] = static_cast<char>(rng());
    if (rng() % 3 == 0) body.insert(rng() % body.size(), std::string(rng() % 20, static_cast<char>(rng())));
    std::vector<uint8_t> a(3), b(2);
    std::vector<RangePart> parts{{10, 3, a.data()}, {50, 2, b.data()}};
    MultipartRanges m(parts, "B");
    size_t at = 0;
    bool ok = true;
    while (ok && at < body.size()) {
      const size_t n = std::min<size_t>(body.size() - at, 1 + rng() % 16);
      ok = m.feed(body.data() + at, n);
      at += n;
    }
    if (ok && m.complete() && body == good) {
      EXPECT_EQ(std::string(a.begin(), a.end()), "xyz");
      EXPECT_EQ(std::string(b.begin(), b.end()), "pq");
    }
    EXPECT_LE(m.data_bytes(), 5u);
  }
}

}  // namespace
