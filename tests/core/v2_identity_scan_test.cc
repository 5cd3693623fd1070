// The identity-scan shard resolver (src/set/v2_shards.h) promises that each
// group of same-size files is hashed once per digest algorithm: a model of n
// equal-size shards costs n digests, not n². Counted here through
// IdentityScan::files_hashed().
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "digest/digest.h"
#include "set/v2_shards.h"
#include "test_util.h"

namespace {

std::string digest_of(const std::vector<uint8_t> &bytes, zt_digest_alg alg) {
  zt::Digester d(alg);
  d.update(bytes.data(), bytes.size());
  return d.finish_string();
}

class IdentityScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    ASSERT_FALSE(dir_.empty());
  }
  std::vector<uint8_t> put(const std::string &name, size_t size, uint8_t seed) {
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
    FILE *f = std::fopen((dir_ + "/" + name).c_str(), "wb");
    EXPECT_NE(nullptr, f);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return bytes;
  }
  zttest::TempDir tmp_;  // mkdtemp on POSIX, %TEMP% on Windows
  std::string dir_;
};

TEST_F(IdentityScanTest, EachSameSizeGroupIsHashedOncePerAlgorithm) {
  std::vector<std::vector<uint8_t>> same;
  for (int i = 0; i < 4; ++i) same.push_back(put("s" + std::to_string(i) + ".zt", 1000, static_cast<uint8_t>(i)));
  const std::vector<uint8_t> other = put("other.zt", 300, 9);
  put("ignored.bin", 1000, 42);  // not a .zt name: never listed, never hashed
  const zt::IdentityScan scan(dir_);
  EXPECT_EQ(0u, scan.files_hashed());  // listing costs no digest

  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 4; ++i) {
      const std::string found = scan.find(1000, digest_of(same[i], ZT_DIGEST_XXH3));
      EXPECT_EQ(dir_ + "/s" + std::to_string(i) + ".zt", found);
      EXPECT_EQ(4u, scan.files_hashed()) << "round " << round << ", shard " << i;
    }
  // A miss in a group already hashed hashes nothing again.
  EXPECT_EQ("", scan.find(1000, digest_of(other, ZT_DIGEST_XXH3)));
  EXPECT_EQ(4u, scan.files_hashed());
  // Another size hashes only its own group; a size with no file, nothing.
  EXPECT_EQ(dir_ + "/other.zt", scan.find(300, digest_of(other, ZT_DIGEST_XXH3)));
  EXPECT_EQ(5u, scan.files_hashed());
  EXPECT_EQ("", scan.find(12345, digest_of(other, ZT_DIGEST_XXH3)));
  EXPECT_EQ(5u, scan.files_hashed());
  // Another algorithm is another digest of the group: hashed once more.
  EXPECT_EQ(dir_ + "/s2.zt", scan.find(1000, digest_of(same[2], ZT_DIGEST_SHA256)));
  EXPECT_EQ(dir_ + "/s3.zt", scan.find(1000, digest_of(same[3], ZT_DIGEST_SHA256)));
  EXPECT_EQ(9u, scan.files_hashed());
}

}  // namespace
