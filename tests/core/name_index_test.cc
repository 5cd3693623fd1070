// NameIndex: open addressing with backward-shift deletion, checked against
// std::set through inserts, lookups and erases that leave long probe
// chains (a small table filled to its load limit, wrapping around).
#include "util/name_index.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

TEST(NameIndex, AgreesWithASetThroughInsertsAndErases) {
  std::vector<std::string> names;
  auto name_of = [&](size_t i) -> std::string_view { return names[i]; };
  zt::NameIndex index;
  std::set<std::string> live;
  std::mt19937 rng(11);
  for (int round = 0; round < 20000; ++round) {
    std::string n = "n" + std::to_string(rng() % 3000);
    if (rng() % 3 == 0 && !live.empty()) {
      index.erase(n, name_of);
      live.erase(n);
    } else {
      names.push_back(n);  // positions only grow; a name may come back at a new one
      const bool stored = index.insert(n, names.size() - 1, name_of);
      EXPECT_EQ(stored, live.insert(n).second) << n;
      if (!stored) names.pop_back();
    }
    if (round % 97 == 0)
      for (int k = 0; k < 3000; k += 7) {
        std::string q = "n" + std::to_string(k);
        size_t at = index.find(q, name_of);
        ASSERT_EQ(at != zt::NameIndex::npos, live.count(q) == 1) << q;
        if (at != zt::NameIndex::npos) EXPECT_EQ(names[at], q);
      }
  }
}

}  // namespace
