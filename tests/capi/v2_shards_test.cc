// Format v2 shards (spec §7, Appendix B): parts in other files, resolved by
// the positional convention beneath the root's folder, by a caller's
// resolver, or by identity; the verification ladder (magic and version,
// exact size, whole-file digest in verify); any v2 file as a shard.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef _WIN32
#include <unistd.h>
#endif

#include "test_util.h"
#include "v2_image.h"
#include "ztensor.h"
#include "ztensor_set.h"

namespace {

using namespace v2img;
using namespace zttest;

std::string str(const std::vector<uint8_t> &b) {
  return std::string(b.begin(), b.end());
}

// A data shard (§7.2): magic, `blob` at 4096, a footer of zeros.
std::vector<uint8_t> data_shard(const std::vector<uint8_t> &blob) {
  std::vector<uint8_t> b(4096 + blob.size() + 40, 0);
  std::memcpy(b.data(), kMagic, 8);
  std::copy(blob.begin(), blob.end(), b.begin() + 4096);
  const size_t f = 4096 + blob.size();
  put_le(b, f + 24, 2, 4);
  std::memcpy(b.data() + f + 32, kMagic, 8);
  return b;
}

std::string xxh3_of(const std::vector<uint8_t> &b) {
  char d[32];
  std::snprintf(d, sizeof d, "xxh3:%016llx", static_cast<unsigned long long>(XXH3_64bits(b.data(), b.size())));
  return d;
}

// The stored (little-endian) bytes of n floats from `start`.
std::vector<uint8_t> floats(size_t n, float start) {
  std::vector<uint8_t> b(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float v = start + static_cast<float>(i);
    std::memcpy(b.data() + 4 * i, &v, 4);
  }
  return zttest::host_to_le(b.data(), b.size(), 4);
}

// f32 elements as a read hands them over (host order), as stored.
std::vector<uint8_t> stored_f32(const void *host, size_t len) {
  return zttest::host_to_le(host, len, 4);
}

// A root 'model.zt' whose "a" lives in data shard "00001" and whose "b"
// lives in "00002", a file with a manifest of its own (any .zt may serve).
struct Model {
  std::vector<uint8_t> a = floats(64, 1), b = floats(16, 100);
  std::vector<uint8_t> shard1, shard2, root;
  Model(int64_t size_delta = 0, bool bad_digest = false) {
    shard1 = data_shard(a);
    shard2 = assemble(4096 + b.size(), manifest({{"own", dense("f32", {16}, 4096, b.size())}}));
    plant(shard2, 4096, b);
    std::string d1 = xxh3_of(shard1);
    if (bad_digest) d1 = "xxh3:0011223344556677";
    const std::string m =
        manifest({{"a", dense("f32", {64}, 4096, a.size(), {{"shard", t("00001")}})},
                  {"b", dense("f32", {16}, 4096, b.size(), {{"shard", t("00002")}})}},
                 {{"shards", map({{"00001", map({{"size", u(shard1.size() + size_delta)}, {"digest", t(d1)}})},
                                  {"00002", map({{"size", u(shard2.size())}, {"digest", t(xxh3_of(shard2))}})}})}});
    root = assemble(8, m);
  }
  void write(TempDir &dir, const std::string &stem = "model") const {
    write_file(dir.file(stem + ".zt"), str(root));
    write_file(dir.file(stem + "-00001.zt"), str(shard1));
    write_file(dir.file(stem + "-00002.zt"), str(shard2));
  }
};

std::vector<uint8_t> read_object(zt_file *f, const char *name, zt_status *st) {
  const zt_object *o = nullptr;
  *st = zt_file_object_by_name(f, name, std::strlen(name), &o);
  if (*st != ZT_OK) return {};
  std::vector<uint8_t> out(1024);
  size_t n = 0;
  *st = zt_component_read(o, 0, out.data(), out.size(), &n);
  out.resize(*st == ZT_OK ? n : 0);
  return stored_f32(out.data(), out.size());  // the parts are f32
}

TEST(V2Shards, PositionalBesideTheRoot) {
  TempDir dir;
  Model m;
  m.write(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), nullptr, &f)) << zt_last_error();
  zt_status st;
  EXPECT_EQ(m.a, read_object(f, "a", &st)) << zt_last_error();
  EXPECT_EQ(m.b, read_object(f, "b", &st)) << zt_last_error();
  // A view of a part in a mapped shard points into that shard.
  const zt_object *o = nullptr;
  ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "a", 1, &o));
  const void *p = nullptr;
  size_t n = 0;
  if (zttest::kHostBigEndian) {  // no view of little-endian f32s there (docs/cross.md): reads swap
    EXPECT_EQ(ZT_E_NOT_ZERO_COPY, zt_component_view(o, 0, &p, &n));
  } else {
    ASSERT_EQ(ZT_OK, zt_component_view(o, 0, &p, &n)) << zt_last_error();
    EXPECT_EQ(0, std::memcmp(p, m.a.data(), n));
  }
  // Ranged, slice and streamed reads of a part in a shard read that shard.
  ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "b", 1, &o));
  float four[4];
  ASSERT_EQ(ZT_OK, zt_component_read_range(o, 0, 3, 4, four, sizeof four)) << zt_last_error();
  EXPECT_EQ(0, std::memcmp(stored_f32(four, sizeof four).data(), m.b.data() + 12, sizeof four));
  const uint64_t start[1] = {5}, stop[1] = {9};
  ASSERT_EQ(ZT_OK, zt_component_read_slice(o, 0, 1, start, stop, four, sizeof four)) << zt_last_error();
  EXPECT_EQ(0, std::memcmp(stored_f32(four, sizeof four).data(), m.b.data() + 20, sizeof four));
  zt_component_stream *s = nullptr;
  ASSERT_EQ(ZT_OK, zt_component_stream_open(o, 0, &s)) << zt_last_error();
  std::vector<uint8_t> streamed(m.b.size() + 8);
  size_t got = 0;
  ASSERT_EQ(ZT_OK, zt_component_stream_read(s, streamed.data(), streamed.size(), &got)) << zt_last_error();
  zt_component_stream_close(s);
  streamed.resize(got);
  EXPECT_EQ(m.b, stored_f32(streamed.data(), streamed.size()));
  std::vector<uint8_t> stored(m.b.size());
  size_t stored_len = 0;
  ASSERT_EQ(ZT_OK, zt_component_read_stored(o, 0, stored.data(), stored.size(), &stored_len)) << zt_last_error();
  EXPECT_EQ(m.b, stored);
  EXPECT_EQ(ZT_OK, zt_file_verify(f, 0, nullptr, nullptr)) << zt_last_error();
  zt_close(f);
  // The family renamed together stays resolvable (Appendix B).
  TempDir d2;
  m.write(d2, "llama");
  ASSERT_EQ(ZT_OK, zt_open(d2.file("llama.zt").c_str(), nullptr, &f)) << zt_last_error();
  EXPECT_EQ(m.b, read_object(f, "b", &st)) << zt_last_error();
  zt_close(f);
}

TEST(V2Shards, ReadManyAndPreadAccess) {
  TempDir dir;
  Model m;
  m.write(dir);
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.access = ZT_ACCESS_PREAD;
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), &opts, &f)) << zt_last_error();
  zt_status st;
  EXPECT_EQ(m.a, read_object(f, "a", &st)) << zt_last_error();
  std::vector<uint8_t> a(m.a.size()), b(m.b.size());
  zt_read_request reqs[2] = {};
  ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "a", 1, &reqs[0].object));
  ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "b", 1, &reqs[1].object));
  reqs[0].dst = a.data();
  reqs[0].dst_capacity = a.size();
  reqs[1].dst = b.data();
  reqs[1].dst_capacity = b.size();
  ASSERT_EQ(ZT_OK, zt_file_read_many(f, reqs, 2)) << zt_last_error();
  EXPECT_EQ(m.a, stored_f32(a.data(), a.size()));
  EXPECT_EQ(m.b, stored_f32(b.data(), b.size()));
  zt_close(f);
}

TEST(V2Shards, AMissingShardCostsOnlyItsParts) {
  TempDir dir;
  Model m;
  m.write(dir);
  std::remove(dir.file("model-00002.zt").c_str());
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), nullptr, &f)) << zt_last_error();
  zt_status st;
  EXPECT_EQ(m.a, read_object(f, "a", &st));
  read_object(f, "b", &st);
  EXPECT_EQ(ZT_E_IO, st);
  const std::string msg = zt_last_error();
  EXPECT_NE(std::string::npos, msg.find("shard '00002'")) << msg;
  EXPECT_NE(std::string::npos, msg.find("model-00002.zt")) << msg;
  EXPECT_NE(ZT_OK, zt_file_verify(f, 0, nullptr, nullptr));
  zt_close(f);
}

TEST(V2Shards, StrictRefusesARootWhoseShardFails) {
  TempDir dir;
  Model m;
  m.write(dir);
  std::remove(dir.file("model-00002.zt").c_str());
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.strict = 1;
  zt_file *f = nullptr;
  EXPECT_EQ(ZT_E_IO, zt_open(dir.file("model.zt").c_str(), &opts, &f));
  EXPECT_EQ(nullptr, f);
  const std::string msg = zt_last_error();
  EXPECT_NE(std::string::npos, msg.find("shard '00002'")) << msg;
  m.write(dir);
  ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), &opts, &f)) << zt_last_error();
  zt_close(f);
}

TEST(V2Shards, LadderMagicAndExactSize) {
  {
    TempDir dir;
    Model m(+1);  // the table says one byte more
    m.write(dir);
    zt_file *f = nullptr;
    ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), nullptr, &f)) << zt_last_error();
    zt_status st;
    read_object(f, "a", &st);
    EXPECT_EQ(ZT_E_DIGEST_MISMATCH, st);
    const std::string msg = zt_last_error();
    EXPECT_NE(std::string::npos, msg.find("rejected (ShardIdentity)")) << msg;
    EXPECT_EQ(m.b, read_object(f, "b", &st));
    zt_close(f);
  }
  {
    TempDir dir;
    Model m;
    m.write(dir);
    std::vector<uint8_t> bad = m.shard1;
    bad[bad.size() - 16] = 3;  // footer version 3
    write_file(dir.file("model-00001.zt"), str(bad));
    zt_file *f = nullptr;
    ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), nullptr, &f)) << zt_last_error();
    zt_status st;
    read_object(f, "a", &st);
    EXPECT_NE(ZT_OK, st);
    const std::string msg = zt_last_error();
    EXPECT_NE(std::string::npos, msg.find("rejected (Version)")) << msg;
    zt_close(f);
  }
}

TEST(V2Shards, DeepVerifyChecksTheWholeFileDigest) {
  TempDir dir;
  Model m(0, true);
  m.write(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), nullptr, &f)) << zt_last_error();
  zt_status st;
  EXPECT_EQ(m.a, read_object(f, "a", &st));  // reads trust size and footer only
  EXPECT_EQ(ZT_E_DIGEST_MISMATCH, zt_file_verify(f, 0, nullptr, nullptr));
  const std::string msg = zt_last_error();
  EXPECT_NE(std::string::npos, msg.find("rejected (ShardIdentity)")) << msg;
  EXPECT_NE(std::string::npos, msg.find("whole-file digest")) << msg;
  zt_close(f);
}

#ifndef _WIN32
TEST(V2Shards, NeverOutsideTheRootsFolder) {
  TempDir dir, outside;
  Model m;
  m.write(dir);
  write_file(outside.file("real.zt"), str(m.shard1));
  std::remove(dir.file("model-00001.zt").c_str());
  ASSERT_EQ(0, ::symlink(outside.file("real.zt").c_str(), dir.file("model-00001.zt").c_str()));
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), nullptr, &f)) << zt_last_error();
  zt_status st;
  read_object(f, "a", &st);
  EXPECT_EQ(ZT_E_IO, st);
  const std::string msg = zt_last_error();
  EXPECT_NE(std::string::npos, msg.find("symbolic link")) << msg;
  zt_close(f);
}
#endif

// A root whose parts name more shards than a set may hold opens none of
// them (each would cost a mapping or a descriptor, remotely requests).
TEST(V2Shards, MoreShardsThanTheBoundOpenNone) {
  TempDir dir;
  const size_t n = ZT_SET_MAX_SHARDS + 1;
  Fields objects, table;
  objects.reserve(n);
  table.reserve(n);
  char name[16];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(name, sizeof name, "%06zu", i);
    objects.push_back({std::string("o") + name, dense("u8", {1}, 4096, 1, {{"shard", t(name)}})});
    table.push_back({name, map({{"size", u(8192)}, {"digest", t("xxh3:0011223344556677")}})});
  }
  write_file(dir.file("model.zt"), str(assemble(8, manifest(objects, {{"shards", map(table)}}))));
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(dir.file("model.zt").c_str(), nullptr, &f)) << zt_last_error();
  zt_status st;
  read_object(f, "o000000", &st);
  EXPECT_EQ(ZT_E_LIMIT, st);
  const std::string msg = zt_last_error();
  EXPECT_NE(std::string::npos, msg.find("65537 shards")) << msg;
  zt_close(f);
}

TEST(V2Shards, MemoryOpenReachesNoOtherFile) {
  Model m;
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_memory(m.root.data(), m.root.size(), nullptr, &f)) << zt_last_error();
  zt_status st;
  read_object(f, "a", &st);
  EXPECT_EQ(ZT_E_UNSUPPORTED, st);
  const std::string msg = zt_last_error();
  EXPECT_NE(std::string::npos, msg.find("zt_open_sharded")) << msg;
  zt_close(f);
}

// The caller's convention, and the identity scan shipped as one.
struct Asked {
  std::string dir;
  std::vector<std::string> names;
  std::vector<std::thread::id> threads;
};
zt_status by_name_table(void *user, const zt_shard_request *req, char *location, size_t capacity) {
  auto *a = static_cast<Asked *>(user);
  a->names.push_back(req->name);
  a->threads.push_back(std::this_thread::get_id());
  if (std::string(req->name) == "00002") return ZT_E_NOT_FOUND;
  const std::string p = a->dir + "/blob-" + req->name;
  if (p.size() + 1 > capacity) return ZT_E_BUFFER_TOO_SMALL;
  std::memcpy(location, p.c_str(), p.size() + 1);
  return ZT_OK;
}

TEST(V2Shards, ResolverCallback) {
  TempDir dir;
  Model m;
  write_file(dir.file("root.zt"), str(m.root));
  write_file(dir.file("blob-00001"), str(m.shard1));
  Asked asked{dir.path(), {}, {}};
  zt_shard_options so;
  zt_shard_options_init(&so);
  so.resolve = by_name_table;
  so.user = &asked;
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_sharded(dir.file("root.zt").c_str(), nullptr, nullptr, &so, &f)) << zt_last_error();
  EXPECT_EQ((std::vector<std::string>{"00001", "00002"}), asked.names);
  // The files are opened at once, but the resolver is still called as the C
  // ABI promises: on the opening thread, one call at a time.
  EXPECT_EQ(std::vector<std::thread::id>(2, std::this_thread::get_id()), asked.threads);
  zt_status st;
  EXPECT_EQ(m.a, read_object(f, "a", &st)) << zt_last_error();
  read_object(f, "b", &st);
  EXPECT_EQ(ZT_E_NOT_FOUND, st);
  zt_close(f);
}

TEST(V2Shards, IdentityScanSurvivesAnyRenaming) {
  TempDir dir, store;
  Model m;
  write_file(dir.file("root.zt"), str(m.root));
  write_file(store.file("x.zt"), str(m.shard2));
  write_file(store.file("y.zt"), str(m.shard1));
  // Same size as shard1, other bytes: read, and passed over.
  std::vector<uint8_t> decoy = m.shard1;
  decoy[4100] ^= 1;
  write_file(store.file("a-decoy.zt"), str(decoy));
  write_file(store.file("not-zt"), str(m.shard1));
  zt_shard_scan *scan = nullptr;
  ASSERT_EQ(ZT_OK, zt_shard_scan_open(store.path().c_str(), &scan)) << zt_last_error();
  zt_shard_options so;
  zt_shard_options_init(&so);
  so.resolve = zt_shard_resolve_by_identity;
  so.user = scan;
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_sharded(dir.file("root.zt").c_str(), nullptr, nullptr, &so, &f)) << zt_last_error();
  zt_status st;
  EXPECT_EQ(m.a, read_object(f, "a", &st)) << zt_last_error();
  EXPECT_EQ(m.b, read_object(f, "b", &st)) << zt_last_error();
  EXPECT_EQ(ZT_OK, zt_file_verify(f, 0, nullptr, nullptr)) << zt_last_error();
  zt_close(f);
  // The scan serves another open: it hashed each size group once already.
  ASSERT_EQ(ZT_OK, zt_open_sharded(dir.file("root.zt").c_str(), nullptr, nullptr, &so, &f)) << zt_last_error();
  EXPECT_EQ(m.b, read_object(f, "b", &st)) << zt_last_error();
  zt_close(f);
  EXPECT_EQ(ZT_OK, zt_shard_scan_close(scan));
  EXPECT_EQ(ZT_E_MISUSE, zt_shard_scan_close(scan));
  // Nothing in the folder has the identity: the parts say so.
  std::remove(store.file("y.zt").c_str());
  ASSERT_EQ(ZT_OK, zt_shard_scan_open(store.path().c_str(), &scan));
  so.user = scan;
  ASSERT_EQ(ZT_OK, zt_open_sharded(dir.file("root.zt").c_str(), nullptr, nullptr, &so, &f)) << zt_last_error();
  read_object(f, "a", &st);
  EXPECT_EQ(ZT_E_NOT_FOUND, st);
  zt_close(f);
  EXPECT_EQ(ZT_OK, zt_shard_scan_close(scan));
  EXPECT_EQ(ZT_E_IO, zt_shard_scan_open(store.file("nope").c_str(), &scan));
}

TEST(V2Shards, Arguments) {
  zt_file *f = reinterpret_cast<zt_file *>(1);
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_open_sharded(nullptr, nullptr, nullptr, nullptr, &f));
  EXPECT_EQ(nullptr, f);
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_open_sharded("x.zt", nullptr, nullptr, nullptr, nullptr));
  zt_shard_options so{};
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_open_sharded("x.zt", nullptr, nullptr, &so, &f));
  zt_shard_request req{};
  char loc[8];
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_shard_resolve_by_identity(nullptr, &req, loc, sizeof loc));
  int not_a_scan = 0;
  EXPECT_EQ(ZT_E_MISUSE, zt_shard_resolve_by_identity(&not_a_scan, &req, loc, sizeof loc));
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_shard_scan_open(nullptr, nullptr));
}

}  // namespace
