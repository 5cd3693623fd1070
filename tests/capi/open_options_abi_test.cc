// zt_open_options grew in 1.1.0 and 1.2.0. A program linked against 1.0 calls
// zt_open_options_init@ZTENSOR_1 on the 1.0 struct: that version must write
// the 1.0 bytes only (a canary after them survives) and say so in
// struct_size, which zt_open then honours; the default version fills the
// whole struct. The same for 1.1 programs and the 1.1 struct.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "ztensor.h"
#include "ztensor_io.h"

namespace {

// The struct as 1.0's header declared it.
struct OpenOptions10 {
  uint32_t struct_size, access, strict, threads;
  uint64_t max_manifest_size, max_decoded_size;
};
// The 1.1 one: the same plus verify_on_read (padded to 8 as the compiler
// lays it out).
struct OpenOptions11 {
  uint32_t struct_size, access, strict, threads;
  uint64_t max_manifest_size, max_decoded_size;
  uint32_t verify_on_read;
};

TEST(OpenOptionsAbi, TheOneZeroInitWritesOnlyTheOneZeroStruct) {
  void *lib = dlopen("libztensor.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libztensor.so.1", RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Init = void (*)(void *);
  auto init10 = reinterpret_cast<Init>(dlvsym(lib, "zt_open_options_init", "ZTENSOR_1"));
  auto init11 = reinterpret_cast<Init>(dlvsym(lib, "zt_open_options_init", "ZTENSOR_1.1"));
  auto init12 = reinterpret_cast<Init>(dlvsym(lib, "zt_open_options_init", "ZTENSOR_1.2"));
  ASSERT_NE(init10, nullptr) << "zt_open_options_init@ZTENSOR_1 must stay exported";
  ASSERT_NE(init11, nullptr) << "zt_open_options_init@ZTENSOR_1.1 must stay exported";
  ASSERT_NE(init12, nullptr);
  EXPECT_EQ(reinterpret_cast<void *>(init12), reinterpret_cast<void *>(&zt_open_options_init))
      << "programs built now must get the 1.2 init";

  struct {
    OpenOptions10 o;
    unsigned char canary[16];
  } old;
  std::memset(&old, 0xA5, sizeof old);
  init10(&old.o);
  EXPECT_EQ(old.o.struct_size, sizeof(OpenOptions10));
  EXPECT_EQ(old.o.max_decoded_size, uint64_t{64} << 30);
  for (unsigned char b : old.canary) ASSERT_EQ(b, 0xA5) << "the 1.0 init wrote past the 1.0 struct";
  // zt_open takes it (verify_on_read, beyond it, reads as off).
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open("/nonexistent/x.zt", reinterpret_cast<const zt_open_options *>(&old.o), &f), ZT_E_IO);

  // The 1.1 struct ends at verify_on_read: its init must not write prefetch.
  struct {
    OpenOptions11 o;
    unsigned char canary[16];
  } mid;
  std::memset(&mid, 0xA5, sizeof mid);
  init11(&mid.o);
  EXPECT_EQ(mid.o.struct_size, offsetof(OpenOptions11, verify_on_read) + sizeof(uint32_t));
  EXPECT_EQ(mid.o.verify_on_read, 0u);
  for (unsigned char b : mid.canary) ASSERT_EQ(b, 0xA5) << "the 1.1 init wrote past the 1.1 struct";
  EXPECT_EQ(zt_open("/nonexistent/x.zt", reinterpret_cast<const zt_open_options *>(&mid.o), &f), ZT_E_IO);
  // A 1.1 caller that set struct_size = sizeof itself (40 on LP64, with 4
  // bytes of padding), garbage in the padding: prefetch lies past it, so the
  // padding is never read.
  static_assert(offsetof(zt_open_options, prefetch) >= sizeof(OpenOptions11), "prefetch must not overlay 1.1 padding");
  mid.o.struct_size = sizeof(OpenOptions11);
  EXPECT_EQ(zt_open("/nonexistent/x.zt", reinterpret_cast<const zt_open_options *>(&mid.o), &f), ZT_E_IO)
      << "the 1.1 padding (0xA5 bytes) was read as prefetch";

  zt_open_options cur;
  std::memset(&cur, 0xA5, sizeof cur);
  init12(&cur);
  EXPECT_EQ(cur.struct_size, sizeof(zt_open_options));
  EXPECT_EQ(cur.verify_on_read, 0u);
  EXPECT_EQ(cur.prefetch, 0u);
  dlclose(lib);
}

TEST(OpenOptionsAbi, PrefetchAcceptsOnlyZeroAndOne) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.prefetch = 2;
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open("/nonexistent/x.zt", &o, &f), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("prefetch"), std::string::npos) << zt_last_error();
  o.prefetch = 1;
  EXPECT_EQ(zt_open("/nonexistent/x.zt", &o, &f), ZT_E_IO);
}

// zt_writer_options grew in 1.1.0 the same way (verify_before_replace), and
// in 1.3.0 (format, canonical, v2_digest, alignment: writing v2).
struct WriterOptions10 {
  uint32_t struct_size, digest, encoding;
  int32_t zstd_level;
  uint32_t threads, sync, validate;
};
struct WriterOptions11 {
  WriterOptions10 base;
  uint32_t verify_before_replace;
};

TEST(WriterOptionsAbi, EachInitWritesOnlyItsOwnStruct) {
  void *lib = dlopen("libztensor.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libztensor.so.1", RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Init = void (*)(void *);
  auto init10 = reinterpret_cast<Init>(dlvsym(lib, "zt_writer_options_init", "ZTENSOR_1"));
  auto init11 = reinterpret_cast<Init>(dlvsym(lib, "zt_writer_options_init", "ZTENSOR_1.1"));
  auto init13 = reinterpret_cast<Init>(dlvsym(lib, "zt_writer_options_init", "ZTENSOR_1.3"));
  ASSERT_NE(init10, nullptr) << "zt_writer_options_init@ZTENSOR_1 must stay exported";
  ASSERT_NE(init11, nullptr) << "zt_writer_options_init@ZTENSOR_1.1 must stay exported";
  ASSERT_NE(init13, nullptr);
  EXPECT_EQ(reinterpret_cast<void *>(init13), reinterpret_cast<void *>(&zt_writer_options_init));
  struct {
    WriterOptions10 o;
    unsigned char canary[16];
  } old;
  std::memset(&old, 0xA5, sizeof old);
  init10(&old.o);
  EXPECT_EQ(old.o.struct_size, sizeof(WriterOptions10));
  EXPECT_EQ(old.o.sync, 1u);
  EXPECT_EQ(old.o.validate, 1u);
  for (unsigned char b : old.canary) ASSERT_EQ(b, 0xA5) << "the 1.0 init wrote past the 1.0 struct";
  struct {
    WriterOptions11 o;
    unsigned char canary[24];
  } mid;
  std::memset(&mid, 0xA5, sizeof mid);
  init11(&mid.o);
  EXPECT_EQ(mid.o.base.struct_size, sizeof(WriterOptions11));
  EXPECT_EQ(mid.o.verify_before_replace, 0u);
  for (unsigned char b : mid.canary) ASSERT_EQ(b, 0xA5) << "the 1.1 init wrote past the 1.1 struct";
  zt_writer_options cur;
  std::memset(&cur, 0xA5, sizeof cur);
  init13(&cur);
  EXPECT_EQ(cur.struct_size, sizeof(zt_writer_options));
  EXPECT_EQ(cur.verify_before_replace, 0u);
  EXPECT_EQ(cur.format, 1u) << "existing callers keep getting 1.2 files";
  EXPECT_EQ(cur.canonical, 1u);
  EXPECT_EQ(cur.v2_digest, static_cast<uint32_t>(ZT_DIGEST_XXH3));
  EXPECT_EQ(cur.alignment, 0u);
  dlclose(lib);
}

// zt_migrate_options grew in 1.3.0 (format, canonical).
struct MigrateOptions10 {
  uint32_t struct_size;
  int32_t recompress, zstd_level;
  uint32_t digest, sync;
};

TEST(MigrateOptionsAbi, TheOneZeroInitWritesOnlyTheOneZeroStruct) {
  void *lib = dlopen("libztensor.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libztensor.so.1", RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Init = void (*)(void *);
  auto init10 = reinterpret_cast<Init>(dlvsym(lib, "zt_migrate_options_init", "ZTENSOR_1"));
  auto init13 = reinterpret_cast<Init>(dlvsym(lib, "zt_migrate_options_init", "ZTENSOR_1.3"));
  ASSERT_NE(init10, nullptr) << "zt_migrate_options_init@ZTENSOR_1 must stay exported";
  ASSERT_NE(init13, nullptr);
  EXPECT_EQ(reinterpret_cast<void *>(init13), reinterpret_cast<void *>(&zt_migrate_options_init));
  struct {
    MigrateOptions10 o;
    unsigned char canary[16];
  } old;
  std::memset(&old, 0xA5, sizeof old);
  init10(&old.o);
  EXPECT_EQ(old.o.struct_size, sizeof(MigrateOptions10));
  EXPECT_EQ(old.o.sync, 1u);
  for (unsigned char b : old.canary) ASSERT_EQ(b, 0xA5) << "the 1.0 init wrote past the 1.0 struct";
  zt_migrate_options cur;
  std::memset(&cur, 0xA5, sizeof cur);
  init13(&cur);
  EXPECT_EQ(cur.struct_size, sizeof(zt_migrate_options));
  EXPECT_EQ(cur.format, 1u);
  EXPECT_EQ(cur.canonical, 1u);
  dlclose(lib);
}

// zt_url_options grew in 1.2.0 (stall limits, deadline, S3). A program built
// against 1.1 gets zt_url_options_init@ZTENSOR_1.1: it writes the 1.1 bytes
// only, and zt_open_url reads the new fields as their defaults.
TEST(UrlOptionsAbi, TheOneOneInitWritesOnlyTheOneOneStruct) {
  void *lib = dlopen("libztensor.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libztensor.so.1", RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Init = void (*)(void *);
  auto init11 = reinterpret_cast<Init>(dlvsym(lib, "zt_url_options_init", "ZTENSOR_1.1"));
  auto init12 = reinterpret_cast<Init>(dlvsym(lib, "zt_url_options_init", "ZTENSOR_1.2"));
  ASSERT_NE(init11, nullptr) << "zt_url_options_init@ZTENSOR_1.1 must stay exported";
  ASSERT_NE(init12, nullptr);
  constexpr size_t k11 = offsetof(zt_url_options, user_agent) + sizeof(const char *);
  struct {
    unsigned char o[k11];
    unsigned char canary[32];
  } old;
  std::memset(&old, 0xA5, sizeof old);
  init11(old.o);
  uint32_t size = 0;
  std::memcpy(&size, old.o, sizeof size);
  EXPECT_EQ(size, k11);
  for (unsigned char b : old.canary) ASSERT_EQ(b, 0xA5) << "the 1.1 init wrote past the 1.1 struct";
  // zt_open_url takes it: the 1.2 fields beyond it are not read (no S3
  // endpoint from the canary bytes), so the URL's own failure comes back.
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open_url("ftp://127.0.0.1/x.zt", reinterpret_cast<const zt_url_options *>(old.o), nullptr, &f),
            ZT_E_UNSUPPORTED);
  zt_url_options cur;
  std::memset(&cur, 0xA5, sizeof cur);
  init12(&cur);
  EXPECT_EQ(cur.struct_size, offsetof(zt_url_options, s3_unsigned) + sizeof(uint32_t));
  EXPECT_EQ(cur.low_speed_bytes, 0u);
  EXPECT_EQ(cur.deadline_ms, 0u);
  EXPECT_EQ(cur.s3_region, nullptr);
  EXPECT_EQ(cur.s3_addressing, ZT_S3_ADDRESSING_AUTO);
  dlclose(lib);
}

// 1.3.0 appended the range cost model's fields: zt_url_options_init@ZTENSOR_1.2
// writes the 1.2 struct only; @@ZTENSOR_1.3 (what new programs link) the whole.
TEST(UrlOptionsAbi, TheOneTwoInitWritesOnlyTheOneTwoStruct) {
  void *lib = dlopen("libztensor.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libztensor.so.1", RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Init = void (*)(void *);
  auto init12 = reinterpret_cast<Init>(dlvsym(lib, "zt_url_options_init", "ZTENSOR_1.2"));
  auto init13 = reinterpret_cast<Init>(dlvsym(lib, "zt_url_options_init", "ZTENSOR_1.3"));
  ASSERT_NE(init12, nullptr) << "zt_url_options_init@ZTENSOR_1.2 must stay exported";
  ASSERT_NE(init13, nullptr);
  EXPECT_EQ(reinterpret_cast<void *>(init13), reinterpret_cast<void *>(&zt_url_options_init));
  constexpr size_t k12 = offsetof(zt_url_options, s3_unsigned) + sizeof(uint32_t);
  struct {
    unsigned char o[k12];
    unsigned char canary[32];
  } old;
  std::memset(&old, 0xA5, sizeof old);
  init12(old.o);
  for (unsigned char b : old.canary) ASSERT_EQ(b, 0xA5) << "the 1.2 init wrote past the 1.2 struct";
  zt_url_options cur;
  std::memset(&cur, 0xA5, sizeof cur);
  init13(&cur);
  EXPECT_EQ(cur.struct_size, sizeof(zt_url_options));
  EXPECT_EQ(cur.max_parallel, 0u);  // 1.3: from the link (16 and up), a value a hard cap
  EXPECT_EQ(cur.rtt_ms, 0u);
  EXPECT_EQ(cur.link_bytes_per_s, 0u);
  EXPECT_EQ(cur.max_overfetch_percent, 50u);
  EXPECT_EQ(cur.chunk_bytes, 0u);  // from the link
  dlclose(lib);
}

}  // namespace
