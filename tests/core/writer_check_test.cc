// zt_writer_options.verify_before_replace: the writer opens what it wrote
// with an independent reader before it replaces anything. The sink here
// plays a disk that hands back other bytes than it took (one flipped bit in
// a blob), the one failure no amount of care in the writer itself prevents.
#include <gtest/gtest.h>

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#endif

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "container/sink.h"
#include "util/error.h"
#include "writer.h"

namespace {

class FlippingSink final : public zt::Sink {
 public:
  explicit FlippingSink(uint64_t flip_at) : flip_at_(flip_at) {}
  void write(const void *data, size_t len) override {
    const auto *p = static_cast<const uint8_t *>(data);
    bytes.insert(bytes.end(), p, p + len);
    position_ += len;
  }
  void write_zeros(size_t len) override {
    bytes.insert(bytes.end(), len, 0);
    position_ += len;
  }
  void commit(bool) override { committed = true; }
  void abandon() noexcept override { abandoned = true; }
  bool written_for_check(Written &out) override {
    seen = bytes;
    if (flip_at_ < seen.size()) seen[flip_at_] ^= 0x10;
    out.data = seen.data();
    out.size = seen.size();
    return true;
  }
  std::vector<uint8_t> bytes, seen;
  bool committed = false, abandoned = false;

 private:
  uint64_t flip_at_;
};

// Writes one crc32c-digested tensor whose bytes start at offset 64.
void write_one(zt::Writer &w) {
  zt::BlobOptions bo;
  bo.digest = ZT_DIGEST_CRC32C;
  std::vector<float> v(256, 1.5f);
  const std::vector<uint64_t> shape = {256};
  w.begin_object("t", "dense", shape);
  w.write_blob("t", "data", ZT_F32, v.data(), v.size() * 4, bo);
}

TEST(WriterCheck, ABlobThatReadsBackDifferentlyIsNeverCommitted) {
  zt::WriterOptions wo;
  wo.verify_before_replace = true;
  auto sink = std::make_unique<FlippingSink>(64 + 100);
  FlippingSink *s = sink.get();
  zt::Writer w(std::move(sink), wo);
  write_one(w);
  try {
    w.finish();
    FAIL() << "a file that reads back damaged was committed";
  } catch (const zt::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_DIGEST_MISMATCH) << e.what();
    EXPECT_NE(std::string(e.what()).find("destination is untouched"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'t'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(s->committed);
  EXPECT_TRUE(s->abandoned);
}

TEST(WriterCheck, DamagedManifestIsCaughtToo) {
  zt::WriterOptions wo;
  wo.verify_before_replace = true;
  auto sink = std::make_unique<FlippingSink>(0);  // the header magic
  FlippingSink *s = sink.get();
  zt::Writer w(std::move(sink), wo);
  write_one(w);
  EXPECT_THROW(w.finish(), zt::Error);
  EXPECT_FALSE(s->committed);
}

TEST(WriterCheck, SoundFilesCommitAndTheCheckIsOffByDefault) {
  {
    zt::WriterOptions wo;
    wo.verify_before_replace = true;
    auto sink = std::make_unique<FlippingSink>(UINT64_MAX);  // flips nothing
    FlippingSink *s = sink.get();
    zt::Writer w(std::move(sink), wo);
    write_one(w);
    w.finish();
    EXPECT_TRUE(s->committed);
  }
  {
    zt::WriterOptions wo;  // verify_before_replace off: nothing reads back
    auto sink = std::make_unique<FlippingSink>(64 + 100);
    FlippingSink *s = sink.get();
    zt::Writer w(std::move(sink), wo);
    write_one(w);
    w.finish();
    EXPECT_TRUE(s->committed);
    EXPECT_TRUE(s->seen.empty()) << "the check ran although it was off";
  }
}

// ---- v2 outputs (docs/v2.md, Writing): the same check, the v2 reader.
#ifndef _WIN32

zt::WriterOptions v2_options() {
  zt::WriterOptions wo;
  wo.format = 2;
  wo.sync = false;
  wo.v2.sync = false;
  wo.verify_before_replace = true;
  return wo;
}

// One xxh3-digested tensor; canonical placement puts its bytes at 65536.
void write_one_v2(zt::Writer &w, const std::string &name = "t") {
  std::vector<float> v(256, 1.5f);
  const std::vector<uint64_t> shape = {256};
  w.begin_object(name, "dense", shape);
  w.write_blob(name, "data", ZT_F32, v.data(), v.size() * 4, zt::BlobOptions());
}

TEST(WriterCheckV2, ABlobThatReadsBackDifferentlyIsNeverCommitted) {
  auto sink = std::make_unique<FlippingSink>(65536 + 100);
  FlippingSink *s = sink.get();
  zt::Writer w(std::move(sink), v2_options());
  write_one_v2(w);
  try {
    w.finish();
    FAIL() << "a v2 file that reads back damaged was committed";
  } catch (const zt::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_DIGEST_MISMATCH) << e.what();
    EXPECT_NE(std::string(e.what()).find("destination is untouched"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'t'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(s->committed);
  EXPECT_TRUE(s->abandoned);
}

TEST(WriterCheckV2, DamagedManifestOrFooterIsCaughtToo) {
  for (int where : {0, -50, -1}) {  // the magic, a manifest byte, the footer magic
    // The size of that file, to aim at its manifest and footer.
    auto sized = std::make_unique<FlippingSink>(UINT64_MAX);
    FlippingSink *sz = sized.get();
    uint64_t size = 0;
    {
      zt::Writer w(std::move(sized), v2_options());
      write_one_v2(w);
      w.finish();
      size = sz->bytes.size();  // the writer owns the sink
    }
    const uint64_t at = where == 0 ? 0 : where == -1 ? size - 1 : size - 40 - 10;
    auto sink = std::make_unique<FlippingSink>(at);
    FlippingSink *s = sink.get();
    zt::Writer w(std::move(sink), v2_options());
    write_one_v2(w);
    EXPECT_THROW(w.finish(), zt::Error) << "flip at " << at;
    EXPECT_FALSE(s->committed) << at;
  }
}

TEST(WriterCheckV2, SoundFilesCommitAndTheCheckIsOffByDefault) {
  {
    auto sink = std::make_unique<FlippingSink>(UINT64_MAX);
    FlippingSink *s = sink.get();
    zt::Writer w(std::move(sink), v2_options());
    write_one_v2(w);
    w.finish();
    EXPECT_TRUE(s->committed);
    EXPECT_FALSE(s->seen.empty()) << "the check did not run";
  }
  {
    zt::WriterOptions wo = v2_options();
    wo.verify_before_replace = false;
    auto sink = std::make_unique<FlippingSink>(65536 + 100);
    FlippingSink *s = sink.get();
    zt::Writer w(std::move(sink), wo);
    write_one_v2(w);
    w.finish();
    EXPECT_TRUE(s->committed);
    EXPECT_TRUE(s->seen.empty()) << "the check ran although it was off";
  }
}

#endif  // !_WIN32

#ifdef __linux__
// A real destination file: the v2 writer places its blobs in the
// destination's temporary itself (pwrite; in order: that file is renamed;
// out of order: a spool copied into a second temporary at finish). A byte
// of the temporary changed behind the writer's back (a disk returning other
// bytes) must leave the destination as it was, on both paths.
std::string read_all(const std::string &path) {
  std::string out;
  if (FILE *f = std::fopen(path.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

// Flips a byte at `at` in every open file of ours under `dir` (the writer's
// temporary, named or O_TMPFILE); returns how many it changed.
int flip_temporaries(const std::string &dir, uint64_t at) {
  int changed = 0;
  DIR *d = ::opendir("/proc/self/fd");
  if (!d) return 0;
  while (dirent *e = ::readdir(d)) {
    const std::string fd_path = std::string("/proc/self/fd/") + e->d_name;
    char target[4096];
    const ssize_t n = ::readlink(fd_path.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (std::string(target).rfind(dir + "/", 0) != 0) continue;
    const int fd = ::open(fd_path.c_str(), O_RDWR);
    if (fd < 0) continue;
    uint8_t b = 0;
    if (::pread(fd, &b, 1, static_cast<off_t>(at)) == 1) {
      b ^= 0x10;
      if (::pwrite(fd, &b, 1, static_cast<off_t>(at)) == 1) ++changed;
    }
    ::close(fd);
  }
  ::closedir(d);
  return changed;
}

TEST(WriterCheckV2, ADamagedTemporaryNeverReplacesTheDestination) {
  char tmpl[] = "/tmp/zt-check-v2-XXXXXX";
  ASSERT_NE(nullptr, ::mkdtemp(tmpl));
  const std::string dir = tmpl, dest = dir + "/model.zt";
  for (bool in_order : {true, false}) {
    {
      FILE *f = std::fopen(dest.c_str(), "wb");
      ASSERT_NE(nullptr, f);
      std::fputs("the user's file", f);
      std::fclose(f);
    }
    zt::Writer w(dest, v2_options());
    // Out of order ("b" before "a"), the blobs go to a spool first.
    write_one_v2(w, in_order ? "a" : "b");
    write_one_v2(w, in_order ? "b" : "a");
    ASSERT_GE(flip_temporaries(dir, 65536 + 100), 1) << "no temporary found under " << dir;
    try {
      w.finish();
      FAIL() << "a damaged temporary replaced the destination (in order: " << in_order << ")";
    } catch (const zt::Error &e) {
      EXPECT_EQ(e.status(), ZT_E_DIGEST_MISMATCH) << e.what();
      EXPECT_NE(std::string(e.what()).find("destination is untouched"), std::string::npos) << e.what();
    }
    EXPECT_EQ("the user's file", read_all(dest)) << in_order;
    // Nothing left beside it.
    int entries = 0;
    DIR *d = ::opendir(dir.c_str());
    while (dirent *e = ::readdir(d)) entries += e->d_name[0] != '.';
    ::closedir(d);
    EXPECT_EQ(1, entries) << in_order;
  }
  std::remove(dest.c_str());
  ::rmdir(dir.c_str());
}
#endif  // __linux__

}  // namespace
