// StreamParts: the cold ranges' parts, one per reading thread, with a
// finished thread taking half of the longest part left (src/stream_parts.h).
#include "stream_parts.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace {

using zt::StreamParts;

TEST(StreamParts, EachPartIsHandedOutInOrder) {
  StreamParts p({{0, 3}, {3, 5}});
  EXPECT_EQ(p.claim(0), 0u);
  EXPECT_EQ(p.claim(1), 3u);
  EXPECT_EQ(p.claim(0), 1u);
  EXPECT_EQ(p.claim(1), 4u);
  EXPECT_EQ(p.claim(0), 2u);
}

TEST(StreamParts, AFinishedPartTakesTheSecondHalfOfTheLongestLeft) {
  StreamParts p({{0, 10}, {10, 12}, {12, 13}});
  EXPECT_EQ(p.claim(1), 10u);
  EXPECT_EQ(p.claim(1), 11u);
  // Part 1 is done; part 0 has 10 left: part 1 goes on at 5, part 0 keeps 0-4.
  EXPECT_EQ(p.claim(1), 5u);
  EXPECT_EQ(p.claim(1), 6u);
  EXPECT_EQ(p.claim(0), 0u);
  EXPECT_EQ(p.claim(2), 12u);
  // Part 2 is done: the longest left is part 0 (1-4, 4 left): it takes 3-4.
  EXPECT_EQ(p.claim(2), 3u);
}

TEST(StreamParts, TheLastTaskOfAPartIsLeftToItsOwner) {
  StreamParts p({{0, 1}, {1, 1}});
  EXPECT_EQ(p.claim(1), SIZE_MAX);
  EXPECT_EQ(p.claim(0), 0u);
  EXPECT_EQ(p.claim(0), SIZE_MAX);
  EXPECT_EQ(p.claim(1), SIZE_MAX);
}

TEST(StreamParts, EveryIndexOnceInAnyInterleaving) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = rng() % 40, cut = n ? rng() % (n + 1) : 0;
    StreamParts p({{0, cut}, {cut, n}});
    std::vector<int> seen(n, 0);
    bool done[2] = {false, false};
    while (!done[0] || !done[1]) {
      const size_t k = rng() % 2;
      if (done[k]) continue;
      const size_t i = p.claim(k);
      if (i == SIZE_MAX) {
        done[k] = true;
        continue;
      }
      ASSERT_LT(i, n);
      ++seen[i];
    }
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << "index " << i << " of " << n << ", cut " << cut;
  }
}

TEST(StreamParts, EveryIndexOnceOnThreads) {
  const size_t n = 10000;
  StreamParts p({{0, 3000}, {3000, 7000}, {7000, n}});
  std::vector<std::atomic<int>> seen(n);
  std::vector<std::thread> pool;
  for (size_t k = 0; k < 3; ++k)
    pool.emplace_back([&, k] {
      for (size_t i; (i = p.claim(k)) != SIZE_MAX;) seen[i].fetch_add(1);
    });
  for (auto &t : pool) t.join();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << i;
}

}  // namespace
