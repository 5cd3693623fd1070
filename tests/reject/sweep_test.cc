// Truncation and bit-flip sweeps through the C ABI. Every prefix of a valid
// file opens or fails with a negative status, and whatever opens reads and
// verifies to a result or a status (exercise.h). Flipping any byte of a
// digested blob makes verification fail with ZT_E_DIGEST_MISMATCH; flipping
// any byte of the manifest, its size or the footer gives a clean result or a
// clean error.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "corpus.h"
#include "exercise.h"
#include "test_util.h"
#include "zt_walk.h"
#include "ztensor.h"

namespace {

// ZT_LONG_SWEEPS=1 sweeps every file in full with every bit pattern; the
// default keeps the suite fast (files and manifests up to a few KiB in full).
bool long_sweeps() {
  return zttest::env_or("ZT_LONG_SWEEPS", "0") != "0";
}

struct Named {
  std::string name, bytes;
};

std::vector<std::string> zt_files_in(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 3 && n.compare(n.size() - 3, 3, ".zt") == 0) out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file the library itself writes: raw, zstd, digests of both kinds, a
// streamed blob, a sparse object and attributes.
std::string written_file(const zttest::TempDir &dir) {
  const std::string path = dir.file("written.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.digest = ZT_DIGEST_SHA256;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  std::vector<float> a(300);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17);
  uint64_t shape[] = {300};
  zt_blob_options zo;
  zt_blob_options_init(&zo);
  zo.encoding = ZT_ENCODING_ZSTD;
  zo.digest = ZT_DIGEST_CRC32C;
  EXPECT_EQ(zt_writer_add_dense(w, "raw", 3, ZT_F32, shape, 1, a.data(), a.size() * 4, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "zstd", 4, ZT_F32, shape, 1, a.data(), a.size() * 4, &zo), ZT_OK);
  uint64_t s2[] = {2, 3};
  EXPECT_EQ(zt_writer_begin_object(w, "csr", 3, "sparse_csr", s2, 2), ZT_OK);
  float vals[] = {1, 2};
  uint64_t idx[] = {0, 2}, ptr[] = {0, 1, 2};
  EXPECT_EQ(zt_write_blob(w, "csr", 3, "values", ZT_F32, vals, sizeof vals, nullptr), ZT_OK);
  EXPECT_EQ(zt_write_blob(w, "csr", 3, "indices", ZT_U64, idx, sizeof idx, &zo), ZT_OK);
  EXPECT_EQ(zt_write_blob(w, "csr", 3, "indptr", ZT_U64, ptr, sizeof ptr, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_set_attributes_json(w, "{\"license\": \"mit\", \"n\": [1, 2.5, null]}"), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return zttest::read_file(path);
}

std::vector<Named> sweep_files(const zttest::TempDir &dir) {
  std::vector<Named> files;
  for (auto &[name, bytes] : zttest::valid_files()) files.push_back({name, bytes});
  files.push_back({"written", written_file(dir)});
  const std::string interop = zttest::interop_dir();
  for (const char *sub : {"/v1", "/v0"})
    for (const auto &p : zt_files_in(interop + sub)) files.push_back({p, zttest::read_file(p)});
  // Format v2: the valid files of the original's conformance corpus.
  for (const auto &p : zt_files_in(interop + "/../v2-conformance/valid")) files.push_back({p, zttest::read_file(p)});
  return files;
}

bool is_v2(const std::string &bytes) {
  return bytes.size() >= 8 && bytes.compare(0, 8, "\x89ZT2\r\n\x1a\n") == 0;
}

TEST(Sweep, EveryPrefixOpensOrFailsCleanly) {
  zttest::TempDir dir;
  size_t prefixes = 0, opened = 0;
  for (const auto &f : sweep_files(dir)) {
    SCOPED_TRACE(f.name);
    // Big files: every prefix of the last 64 KiB (manifest and footer), a
    // stride through the blobs before it (those prefixes all lack a footer).
    const size_t n = f.bytes.size();
    const size_t dense_from = n > (size_t{64} << 10) ? n - (size_t{64} << 10) : 0;
    for (size_t len = 0; len < n; len += len < dense_from ? 4093 : 1) {
      ++prefixes;
      for (uint32_t strict = 0; strict < 2; ++strict) {
        zt_open_options opts;
        zt_open_options_init(&opts);
        opts.strict = strict;
        opts.threads = 1;
        zt_file *h = nullptr;
        zt_status st = zt_open_memory(f.bytes.data(), len, &opts, &h);
        if (st != ZT_OK) {
          ASSERT_LT(st, 0);
          ASSERT_EQ(h, nullptr);
          continue;
        }
        ++opened;
        ASSERT_EQ(zttest::exercise_file(h), 0) << "prefix of " << len << " bytes";
        zt_close(h);
      }
    }
  }
  RecordProperty("prefixes", static_cast<int>(prefixes));
  std::printf("truncation sweep: %zu prefixes, %zu opened\n", prefixes, opened);
  EXPECT_GT(prefixes, 10000u);
}

// Digested blobs of a file: (offset, length) of every component with a
// digest of a known algorithm.
std::vector<std::pair<uint64_t, uint64_t>> digested_blobs(const std::string &bytes) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  zt_file *f = nullptr;
  if (zt_open_memory(bytes.data(), bytes.size(), nullptr, &f) != ZT_OK) return out;
  zttest::for_each_component(f, [&](const zt_object *, const zt_object_info &, size_t, const zt_component_info &ci) {
    if ((ci.digest_alg == ZT_DIGEST_SHA256 || ci.digest_alg == ZT_DIGEST_CRC32C || ci.digest_alg == ZT_DIGEST_XXH3) &&
        ci.length)
      out.emplace_back(ci.offset, ci.length);
  });
  zt_close(f);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Foreign files written by their own tools (tests/data/foreign: PyTorch
// checkpoints from torch.save): every prefix and every one-byte flip opens
// or fails with a negative status, and whatever opens reads and verifies to
// a result or a status. Builds without libzip refuse them all cleanly.
TEST(Sweep, ForeignFilesEveryPrefixAndFlip) {
  const std::string dir = zttest::env_or("ZT_SOURCE_ROOT", "") + "/tests/data/foreign";
  size_t opens = 0, opened = 0;
  for (const char *name : {"checkpoint.pt", "state_dict.pth"}) {
    SCOPED_TRACE(name);
    const std::string good = zttest::read_required_file(dir + "/" + name);
    auto attempt = [&](const std::string &bytes, size_t len, const std::string &what) {
      ++opens;
      zt_open_options opts;
      zt_open_options_init(&opts);
      opts.threads = 1;
      zt_file *h = nullptr;
      const zt_status st = zt_open_memory(bytes.data(), len, &opts, &h);
      if (st != ZT_OK) {
        ASSERT_LT(st, 0) << what;
        return;
      }
      ++opened;
      ASSERT_EQ(zttest::exercise_file(h), 0) << what;
      zt_close(h);
    };
    for (size_t len = 0; len < good.size(); ++len) attempt(good, len, "prefix of " + std::to_string(len));
    std::string bytes = good;
    for (size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>(bytes[i] ^ 0xff);
      attempt(bytes, bytes.size(), "byte " + std::to_string(i) + " flipped");
      bytes[i] = good[i];
    }
    attempt(good, good.size(), "the file itself");
  }
  std::printf("foreign sweep: %zu opens, %zu opened\n", opens, opened);
  if (zttest::env_or("ZT_HAVE_LIBZIP", "1") == "1") {
    EXPECT_GT(opened, 2u);
  }
}

TEST(Sweep, FlippingAnyDigestedByteFailsVerification) {
  zttest::TempDir dir;
  size_t flips = 0;
  for (const auto &f : sweep_files(dir)) {
    if (!long_sweeps() && f.bytes.size() > (size_t{16} << 10)) continue;
    auto blobs = digested_blobs(f.bytes);
    if (blobs.empty()) continue;
    SCOPED_TRACE(f.name);
    std::string bytes = f.bytes;
    for (const auto &b : blobs) {
      // Large blobs: every byte of the first and last 4 KiB, a stride between.
      for (uint64_t i = 0; i < b.second; i += (i < 4096 || b.second - i <= 4096) ? 1 : 997) {
        for (uint8_t pattern : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
          ++flips;
          bytes[b.first + i] ^= static_cast<char>(pattern);
          zt_file *h = nullptr;
          zt_open_options opts;
          zt_open_options_init(&opts);
          opts.threads = 1;
          ASSERT_EQ(zt_open_memory(bytes.data(), bytes.size(), &opts, &h), ZT_OK);
          zt_status st = zt_file_verify(h, 0, nullptr, nullptr);
          ASSERT_EQ(st, ZT_E_DIGEST_MISMATCH)
              << "byte " << b.first + i << " ^ " << int(pattern) << ": " << zt_last_error();
          zt_close(h);
          bytes[b.first + i] ^= static_cast<char>(pattern);
        }
      }
    }
  }
  std::printf("digest flip sweep: %zu flips\n", flips);
  EXPECT_GT(flips, 1000u);
}

TEST(Sweep, FlippingAnyManifestByteIsCleanResultOrError) {
  zttest::TempDir dir;
  size_t flips = 0, opened = 0;
  for (const auto &f : sweep_files(dir)) {
    if (!long_sweeps() && f.bytes.size() > (size_t{64} << 10)) continue;
    if (is_v2(f.bytes)) continue;  // FlippingAnyV2ManifestBitIsCaughtByTheHash
    SCOPED_TRACE(f.name);
    // The manifest starts after the last blob; 1.x: size field + footer after.
    zt_file *h = nullptr;
    if (zt_open_memory(f.bytes.data(), f.bytes.size(), nullptr, &h) != ZT_OK) continue;
    zt_close(h);
    uint64_t msize = 0;
    const bool v0 = f.bytes.compare(0, 8, "ZTEN0001") == 0;
    const size_t tail = v0 ? 8 : 16;
    for (int i = 7; i >= 0; --i) msize = (msize << 8) | static_cast<uint8_t>(f.bytes[f.bytes.size() - tail + i]);
    // Every byte with three patterns (low bit, high bit, all bits); all
    // eight single bits too in the long mode.
    const std::vector<uint8_t> patterns =
        long_sweeps() ? std::vector<uint8_t>{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff}
                      : std::vector<uint8_t>{0x01, 0x80, 0xff};
    std::string bytes = f.bytes;
    for (size_t pos = bytes.size() - tail - msize; pos < bytes.size(); ++pos) {
      for (uint8_t pattern : patterns) {
        ++flips;
        bytes[pos] ^= static_cast<char>(pattern);
        for (uint32_t strict = 0; strict < 2; ++strict) {
          zt_open_options opts;
          zt_open_options_init(&opts);
          opts.strict = strict;
          opts.threads = 1;
          zt_status st = zt_open_memory(bytes.data(), bytes.size(), &opts, &h);
          if (st != ZT_OK) {
            ASSERT_LT(st, 0);
            continue;
          }
          ++opened;
          ASSERT_EQ(zttest::exercise_file(h), 0) << "byte " << pos << " ^ " << int(pattern);
          zt_close(h);
        }
        bytes[pos] ^= static_cast<char>(pattern);
      }
    }
  }
  std::printf("manifest flip sweep: %zu flips, %zu opens succeeded\n", flips, opened);
  EXPECT_GT(flips, 10000u);
}

// Format v2 protects its manifest with the footer's XXH3-64: every single
// bit flipped anywhere in a manifest is refused by that check, before a
// byte of the manifest is parsed (the message names ManifestHash, not a
// CBOR or schema rule that parsing the damaged bytes would have hit).
TEST(Sweep, FlippingAnyV2ManifestBitIsCaughtByTheHash) {
  zttest::TempDir dir;
  size_t flips = 0;
  for (const auto &f : sweep_files(dir)) {
    if (!is_v2(f.bytes)) continue;
    SCOPED_TRACE(f.name);
    const size_t n = f.bytes.size();
    uint64_t off = 0, len = 0;
    for (int i = 7; i >= 0; --i) off = (off << 8) | static_cast<uint8_t>(f.bytes[n - 40 + i]);
    for (int i = 7; i >= 0; --i) len = (len << 8) | static_cast<uint8_t>(f.bytes[n - 32 + i]);
    if (len == 0) continue;  // a data shard has no manifest
    std::string bytes = f.bytes;
    for (uint64_t pos = off; pos < off + len; ++pos)
      for (int bit = 0; bit < 8; ++bit) {
        ++flips;
        bytes[pos] ^= static_cast<char>(1 << bit);
        zt_file *h = nullptr;
        ASSERT_EQ(zt_open_memory(bytes.data(), bytes.size(), nullptr, &h), ZT_E_DIGEST_MISMATCH)
            << "byte " << pos << " bit " << bit;
        ASSERT_NE(std::string(zt_last_error()).find("rejected (ManifestHash)"), std::string::npos) << zt_last_error();
        bytes[pos] ^= static_cast<char>(1 << bit);
      }
  }
  std::printf("v2 manifest bit-flip sweep: %zu flips\n", flips);
  EXPECT_GT(flips, 10000u);
}

}  // namespace
