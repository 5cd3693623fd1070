// zt_writer_options.verify_before_replace: the writer opens what it wrote
// with an independent reader before it replaces anything. The sink here
// plays a disk that hands back other bytes than it took (one flipped bit in
// a blob), the one failure no amount of care in the writer itself prevents.
#include <gtest/gtest.h>

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

}  // namespace
