// Sharded checkpoints through the public headers: an index and its shards
// read as one set, and every way an index or a shard can disagree, escape
// its folder or overwhelm the reader.
#include <fcntl.h>
#include <gtest/gtest.h>
#ifndef _WIN32
#include <sys/resource.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_set.h"

namespace {

using zttest::TempDir;
using zttest::write_file;

// A shard holding f32 tensors named `names`, tensor i filled with base + i.
void write_shard(const std::string &path, const std::vector<std::string> &names, float base,
                 const char *attrs = nullptr, bool sync = true) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = sync ? 1 : 0;
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  if (attrs) ASSERT_EQ(zt_writer_set_attributes_json(w, attrs), ZT_OK);
  for (size_t i = 0; i < names.size(); ++i) {
    float v[3] = {base + i, base + i, base + i};
    uint64_t shape = 3;
    ASSERT_EQ(zt_writer_add_dense(w, names[i].data(), names[i].size(), ZT_F32, &shape, 1, v, sizeof v, nullptr), ZT_OK);
  }
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
}

std::string name_of(const zt_object *o) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(zt_object_get_info(o, &info), ZT_OK);
  return std::string(info.name, info.name_len);
}

// Opens the index and expects `want`; returns zt_last_error().
std::string open_fails(const std::string &index, zt_status want, const zt_open_options *opts = nullptr) {
  zt_set *s = reinterpret_cast<zt_set *>(1);
  EXPECT_EQ(zt_open_set(index.c_str(), opts, &s), want) << zt_last_error();
  EXPECT_EQ(s, nullptr);
  zt_set_close(s);
  return zt_last_error();
}

class SetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_shard(dir.file("model-00001-of-00002.zt"), {"a", "b"}, 1, "{\"framework\": \"pt\"}");
    std::filesystem::create_directory(dir.file("sub"));
    write_shard(dir.file("sub/model-00002-of-00002.zt"), {"c"}, 10);
  }
  std::string index(const std::string &text) {
    write_file(dir.file("model.zt.index.json"), text);
    return dir.file("model.zt.index.json");
  }
  std::string good_index() {
    return index(R"({"metadata": {"total_size": 36, "note": "x"},
      "weight_map": {"c": "sub/model-00002-of-00002.zt", "a": "model-00001-of-00002.zt",
                     "b": "model-00001-of-00002.zt"}})");
  }
  TempDir dir;
};

TEST_F(SetTest, ReadsObjectsAcrossShards) {
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(good_index().c_str(), nullptr, &s), ZT_OK) << zt_last_error();
  size_t n = 0;
  ASSERT_EQ(zt_set_object_count(s, &n), ZT_OK);
  ASSERT_EQ(n, 3u);
  // Shards sorted by location, objects in manifest order.
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_set_object_at(s, i, &o), ZT_OK);
    names.push_back(name_of(o));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_set_object_at(s, 3, &o), ZT_E_NOT_FOUND);
  ASSERT_EQ(zt_set_object_by_name(s, "c", 1, &o), ZT_OK);
  float v[3] = {};
  size_t got = 0;
  ASSERT_EQ(zt_component_read(o, 0, v, sizeof v, &got), ZT_OK);  // an ordinary object
  EXPECT_EQ(got, sizeof v);
  EXPECT_EQ(v[2], 10.0f);
  ASSERT_EQ(zt_set_object_by_name(s, "b", 1, &o), ZT_OK);
  ASSERT_EQ(zt_component_read(o, 0, v, sizeof v, &got), ZT_OK);
  EXPECT_EQ(v[0], 2.0f);
  EXPECT_EQ(zt_object_verify(o), ZT_OK);
  EXPECT_EQ(zt_set_object_by_name(s, "zz", 2, &o), ZT_E_NOT_FOUND);
  EXPECT_NE(std::string(zt_last_error()).find("zz"), std::string::npos);

  char *meta = nullptr;
  ASSERT_EQ(zt_set_metadata_json(s, &meta), ZT_OK);
  // Compact, in the index's own key order (written back during the parse).
  EXPECT_EQ(std::string(meta), "{\"total_size\":36,\"note\":\"x\"}");
  zt_free(meta);

  ASSERT_EQ(zt_set_shard_count(s, &n), ZT_OK);
  ASSERT_EQ(n, 2u);
  const zt_file *f = nullptr;
  const char *loc = nullptr;
  ASSERT_EQ(zt_set_shard_at(s, 1, &f, &loc), ZT_OK);
  EXPECT_STREQ(loc, "sub/model-00002-of-00002.zt");
  size_t fn = 0;
  ASSERT_EQ(zt_file_object_count(f, &fn), ZT_OK);
  EXPECT_EQ(fn, 1u);
  EXPECT_EQ(zt_set_shard_at(s, 2, &f, &loc), ZT_E_NOT_FOUND);
  EXPECT_EQ(zt_set_close(s), ZT_OK);
  EXPECT_EQ(zt_set_close(nullptr), ZT_OK);
}

TEST_F(SetTest, NoMetadataIsNullAndUnnamedShardsAreNotPartOfTheSet) {
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(index(R"({"weight_map": {"c": "sub/model-00002-of-00002.zt"}})").c_str(), nullptr, &s), ZT_OK)
      << zt_last_error();
  char *meta = nullptr;
  ASSERT_EQ(zt_set_metadata_json(s, &meta), ZT_OK);
  EXPECT_STREQ(meta, "null");
  zt_free(meta);
  size_t n = 0;
  ASSERT_EQ(zt_set_object_count(s, &n), ZT_OK);
  EXPECT_EQ(n, 1u);
  zt_set_close(s);
}

TEST_F(SetTest, OptionsApplyToShardsAndOldStructSizeWorks) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.access = ZT_ACCESS_PREAD;
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(good_index().c_str(), &o, &s), ZT_OK) << zt_last_error();
  const zt_object *obj = nullptr;
  ASSERT_EQ(zt_set_object_by_name(s, "a", 1, &obj), ZT_OK);
  const void *view = nullptr;
  size_t len = 0;
  EXPECT_EQ(zt_component_view(obj, 0, &view, &len), ZT_E_NOT_ZERO_COPY);  // pread reached the shard
  zt_set_close(s);
  // A caller compiled when the struct ended at `threads` (no limits fields).
  o.struct_size = offsetof(zt_open_options, threads) + sizeof o.threads;
  ASSERT_EQ(zt_open_set(good_index().c_str(), &o, &s), ZT_OK) << zt_last_error();
  zt_set_close(s);
}

TEST_F(SetTest, ShardMissingATensor) {
  const std::string msg = open_fails(index(R"({"weight_map": {"a": "model-00001-of-00002.zt",
      "b": "model-00001-of-00002.zt", "c": "sub/model-00002-of-00002.zt",
      "d": "sub/model-00002-of-00002.zt"}})"),
                                     ZT_E_NOT_FOUND);
  EXPECT_NE(msg.find("tensor 'd'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sub/model-00002-of-00002.zt"), std::string::npos) << msg;
}

TEST_F(SetTest, TensorMappedToTheWrongShard) {
  const std::string msg = open_fails(index(R"({"weight_map": {"a": "sub/model-00002-of-00002.zt",
      "b": "model-00001-of-00002.zt", "c": "sub/model-00002-of-00002.zt"}})"),
                                     ZT_E_NOT_FOUND);
  EXPECT_NE(msg.find("tensor 'a'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("but is in shard 'model-00001-of-00002.zt'"), std::string::npos) << msg;
}

TEST_F(SetTest, TensorInTwoShards) {
  write_shard(dir.file("sub/model-00002-of-00002.zt"), {"c", "a"}, 10);
  const std::string msg = open_fails(good_index(), ZT_E_DUPLICATE_KEY);
  EXPECT_NE(msg.find("object 'a' is in two shards"), std::string::npos) << msg;
}

TEST_F(SetTest, ShardObjectNotInTheIndex) {
  const std::string msg = open_fails(index(R"({"weight_map": {"a": "model-00001-of-00002.zt",
      "c": "sub/model-00002-of-00002.zt"}})"),
                                     ZT_E_MANIFEST);
  EXPECT_NE(msg.find("holds object 'b'"), std::string::npos) << msg;
}

TEST_F(SetTest, DuplicateKeysAreRefused) {
  std::string msg = open_fails(index(R"({"weight_map": {"a": "model-00001-of-00002.zt",
      "b": "model-00001-of-00002.zt", "c": "sub/model-00002-of-00002.zt",
      "a": "sub/model-00002-of-00002.zt"}})"),
                               ZT_E_DUPLICATE_KEY);
  EXPECT_NE(msg.find("'a' appears twice"), std::string::npos) << msg;
  msg = open_fails(index(R"({"weight_map": {}, "weight_map": {}})"), ZT_E_DUPLICATE_KEY);
  // Keys repeat freely across different objects.
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(index(R"({"metadata": {"a": {"a": 1}}, "weight_map": {"a": "model-00001-of-00002.zt",
      "b": "model-00001-of-00002.zt", "c": "sub/model-00002-of-00002.zt"}})")
                            .c_str(),
                        nullptr, &s),
            ZT_OK)
      << zt_last_error();
  zt_set_close(s);
}

// The metadata is written back as JSON text while the index is parsed (no
// tree): every kind of value must come back as the same JSON.
TEST_F(SetTest, MetadataOfEveryJsonKindComesBackEqual) {
  const std::string meta =
      R"({"s": "q\"b\\s\n\u0001\u00e9\ud83d\ude00", "f": 1.5e300, "g": -0.25, "i": -7,)"
      R"( "u": 18446744073709551615, "n": null, "b": [true, false, []], "o": {"x": {}, "y": [{"z": 1}]}})";
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(index(R"({"metadata": )" + meta + R"(, "weight_map": {"a": "model-00001-of-00002.zt",
      "b": "model-00001-of-00002.zt", "c": "sub/model-00002-of-00002.zt"}})")
                            .c_str(),
                        nullptr, &s),
            ZT_OK)
      << zt_last_error();
  char *got = nullptr;
  ASSERT_EQ(zt_set_metadata_json(s, &got), ZT_OK);
  EXPECT_EQ(nlohmann::json::parse(got), nlohmann::json::parse(meta)) << got;
  zt_free(got);
  zt_set_close(s);
}

TEST_F(SetTest, LocationsMayNotLeaveTheFolder) {
  // Real files exist at every escaping location, so only the rule can refuse.
  write_shard(dir.file("sub/inner.zt"), {"x"}, 0);
  const std::string sub_index = dir.file("sub/i.json");
  for (const char *loc :
       {"../model-00001-of-00002.zt", "./model-00002-of-00002.zt", "model-00002-of-00002.zt/..", "a//b.zt", "",
        "/etc/passwd", "file:///etc/passwd", "http://example.com/x.zt", "..\\\\x.zt", "c:x.zt",
        // percent-encoded dot segments and separators, which a web server
        // decodes before resolving (issue 27)
        "%2e%2e/model-00001-of-00002.zt", "%2E%2E/x.zt", "%2e./x.zt", ".%2E/x.zt", "sub/%2e/x.zt", "%252e%252e/x.zt",
        "..%2fx.zt", "%2e%2e%2fx.zt", "a%5cx.zt", "a%00.zt"}) {
    std::string text = std::string(R"({"weight_map": {"x": ")") + loc + "\"}}";
    write_file(sub_index, text);
    const std::string msg = open_fails(sub_index, ZT_E_MANIFEST);
    EXPECT_NE(msg.find("rule: shard locations are relative paths"), std::string::npos) << loc << ": " << msg;
  }
  // The same shard named properly opens.
  write_file(sub_index, R"({"weight_map": {"x": "inner.zt"}})");
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(sub_index.c_str(), nullptr, &s), ZT_OK) << zt_last_error();
  zt_set_close(s);
}

TEST_F(SetTest, LocationsNoServerReadsAsAParent) {
  // Segments that Tomcat, Jetty, Spring, IIS or a Windows file system read
  // as ".." or "." although they are neither byte for byte (issue 37): a
  // ';' path parameter, a query or fragment cut, overlong UTF-8 and
  // look-alike dots, %uXXXX, white space, more dots. A file exists at
  // each name so that only the rule can refuse.
  write_shard(dir.file("sub/inner.zt"), {"x"}, 0);
  const std::string sub_index = dir.file("sub/i.json");
  for (const char *loc : {"..;/model-00001-of-00002.zt",
                          "..;jsessionid=1/x.zt",
                          ".;/inner.zt",
                          "sub/..;/..;/x.zt",
                          "%2e%2e;/x.zt",
                          "..%3b/x.zt",
                          "%2e.;x/x.zt",
                          "..?/x.zt",
                          "..#/x.zt",
                          "..%00/x.zt",
                          "..%5c/x.zt",
                          "a/..%5c..%5cx.zt",
                          "%c0%ae%c0%ae/x.zt",
                          "%C0%AE./x.zt",
                          "%e0%80%ae%e0%80%ae/x.zt",
                          "%u002e%u002e/x.zt",
                          "%U002E./x.zt",
                          "\xEF\xBC\x8E\xEF\xBC\x8E/x.zt",
                          "%ef%bc%8e%ef%bc%8e/x.zt",
                          "\xE2\x80\xA4\xE2\x80\xA4/x.zt",
                          "\xE2\x80\xA5/x.zt",
                          "%e2%80%a6/x.zt",
                          ".. /x.zt",
                          "..%20/x.zt",
                          ". ./x.zt",
                          "..%09/x.zt",
                          ".../x.zt",
                          "..../x.zt",
                          "%252e%252e%253b/x.zt",
                          ";x/inner.zt",
                          "a/;/x.zt",
                          "?x",
                          "#x"}) {
    std::string text = std::string(R"({"weight_map": {"x": ")") + loc + "\"}}";
    write_file(sub_index, text);
    const std::string msg = open_fails(sub_index, ZT_E_MANIFEST);
    EXPECT_NE(msg.find("rule: shard locations are relative paths"), std::string::npos) << loc << ": " << msg;
  }
  // Names that merely contain dots, ';', '%' or spaces stay valid.
  for (const char *name : {"a..b.zt", "v1.;2.zt", "x;y.zt", "50%.zt", "with space.zt", ".hidden.zt", "..x.zt"}) {
    write_shard(dir.file(std::string("sub/") + name), {"x"}, 0);
    write_file(sub_index, std::string(R"({"weight_map": {"x": ")") + name + "\"}}");
    zt_set *s = nullptr;
    EXPECT_EQ(zt_open_set(sub_index.c_str(), nullptr, &s), ZT_OK) << name << ": " << zt_last_error();
    zt_set_close(s);
  }
}

TEST_F(SetTest, MalformedIndexes) {
  open_fails(index("not json"), ZT_E_MANIFEST);
  open_fails(index("[1, 2]"), ZT_E_MANIFEST);
  open_fails(index("{}"), ZT_E_MANIFEST);
  open_fails(index(R"({"weight_map": []})"), ZT_E_MANIFEST);
  open_fails(index(R"({"weight_map": {"a": 3}})"), ZT_E_MANIFEST);
  open_fails(index(R"({"metadata": 3, "weight_map": {}})"), ZT_E_MANIFEST);
  open_fails(index("{\"weight_map\": {\"\xff\": \"a.zt\"}}"), ZT_E_MANIFEST);  // not UTF-8
  open_fails(index(std::string(100000, '[') + std::string(100000, ']')), ZT_E_CBOR_DEPTH);
  open_fails(dir.file("no-such-index.json"), ZT_E_IO);
  open_fails(dir.path(), ZT_E_IO);  // a folder
  const std::string msg = open_fails(index(R"({"weight_map": {"a": "missing.zt"}})"), ZT_E_IO);
  EXPECT_NE(msg.find("shard 'missing.zt'"), std::string::npos) << msg;
  // An empty set is a set.
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(index(R"({"weight_map": {}})").c_str(), nullptr, &s), ZT_OK);
  size_t n = 1;
  EXPECT_EQ(zt_set_object_count(s, &n), ZT_OK);
  EXPECT_EQ(n, 0u);
  zt_set_close(s);
}

TEST_F(SetTest, LimitsBoundHostileIndexes) {
  // Larger than max_manifest_size: refused before it is read.
  zt_open_options o;
  zt_open_options_init(&o);
  o.max_manifest_size = 64;
  open_fails(good_index(), ZT_E_MANIFEST_LIMIT, &o);
  // More distinct shards than a set may open: refused before any is opened.
  std::string text = "{\"weight_map\": {";
  for (size_t i = 0; i <= ZT_SET_MAX_SHARDS; ++i)
    text += (i ? ",\"t" : "\"t") + std::to_string(i) + "\": \"s" + std::to_string(i) + ".zt\"";
  text += "}}";
  std::string msg = open_fails(index(text), ZT_E_LIMIT);
  EXPECT_NE(msg.find("65536 shards"), std::string::npos) << msg;
  // A million tensors in one shard that has none of them: one clear error.
  text = "{\"weight_map\": {";
  for (size_t i = 0; i < 1000000; ++i)
    text += (i ? ",\"t" : "\"t") + std::to_string(i) + "\": \"model-00001-of-00002.zt\"";
  text += "}}";
  msg = open_fails(index(text), ZT_E_NOT_FOUND);
  EXPECT_NE(msg.find("has no object of that name"), std::string::npos) << msg;
  // A huge string key.
  open_fails(index("{\"weight_map\": {\"" + std::string(20 << 20, 'k') + "\": \"model-00001-of-00002.zt\"}}"),
             ZT_E_NOT_FOUND);
}

TEST_F(SetTest, Misuse) {
  zt_set *s = nullptr;
  EXPECT_EQ(zt_open_set(nullptr, nullptr, &s), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_open_set(good_index().c_str(), nullptr, nullptr), ZT_E_INVALID_ARG);
  size_t n = 0;
  EXPECT_EQ(zt_set_object_count(nullptr, &n), ZT_E_INVALID_ARG);
  ASSERT_EQ(zt_open_set(good_index().c_str(), nullptr, &s), ZT_OK);
  EXPECT_EQ(zt_set_object_count(s, nullptr), ZT_E_INVALID_ARG);
  int not_a_set = 0;
  EXPECT_EQ(zt_set_object_count(reinterpret_cast<zt_set *>(&not_a_set), &n), ZT_E_MISUSE);
  ASSERT_EQ(zt_set_close(s), ZT_OK);
  EXPECT_EQ(zt_set_close(s), ZT_E_MISUSE);
}

// Issue 27: a local set is read beneath its index's folder, every path
// component opened with O_NOFOLLOW. A symlinked shard or subfolder could
// lead anywhere (another user's files), so it is refused, even when it
// points at a valid shard.
TEST_F(SetTest, SymlinkedShardsAndFoldersAreRefused) {
#ifdef _WIN32
  GTEST_SKIP()
      << "symbolic links (Windows checks reparse points before opening, docs/cross.md; making them needs a privilege)";
#else
  TempDir outside;
  write_shard(outside.file("elsewhere.zt"), {"c"}, 10);
  ASSERT_EQ(::mkdir(outside.file("d").c_str(), 0755), 0);
  write_shard(outside.file("d/model-00002-of-00002.zt"), {"c"}, 10);

  // The shard itself a link.
  ASSERT_EQ(::unlink(dir.file("sub/model-00002-of-00002.zt").c_str()), 0);
  ASSERT_EQ(::symlink(outside.file("elsewhere.zt").c_str(), dir.file("sub/model-00002-of-00002.zt").c_str()), 0);
  std::string msg = open_fails(good_index(), ZT_E_IO);
  EXPECT_NE(msg.find("'sub/model-00002-of-00002.zt' is a symbolic link"), std::string::npos) << msg;

  // A link to a folder (outside, or even inside) on the way.
  ASSERT_EQ(::unlink(dir.file("sub/model-00002-of-00002.zt").c_str()), 0);
  ASSERT_EQ(::rmdir(dir.file("sub").c_str()), 0);
  ASSERT_EQ(::symlink(outside.file("d").c_str(), dir.file("sub").c_str()), 0);
  msg = open_fails(good_index(), ZT_E_IO);
  EXPECT_NE(msg.find("'sub' is a symbolic link"), std::string::npos) << msg;

  // The same set with real files opens.
  ASSERT_EQ(::unlink(dir.file("sub").c_str()), 0);
  ASSERT_EQ(::mkdir(dir.file("sub").c_str(), 0755), 0);
  write_shard(dir.file("sub/model-00002-of-00002.zt"), {"c"}, 10);
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(good_index().c_str(), nullptr, &s), ZT_OK) << zt_last_error();
  zt_set_close(s);

  // The index itself may be reached through a link (the user named it);
  // its shards are still looked up beside the link.
  ASSERT_EQ(::symlink(dir.file("model.zt.index.json").c_str(), dir.file("alias.json").c_str()), 0);
  ASSERT_EQ(zt_open_set(dir.file("alias.json").c_str(), nullptr, &s), ZT_OK) << zt_last_error();
  zt_set_close(s);
#endif
}

// A FIFO (or device, or folder) as a shard or as the index is refused at
// once: nothing waits for a writer that never comes.
TEST_F(SetTest, FifoShardOrIndexIsRefusedWithoutWaiting) {
#ifdef _WIN32
  GTEST_SKIP() << "FIFOs do not exist on Windows";
#else
  ASSERT_EQ(::unlink(dir.file("sub/model-00002-of-00002.zt").c_str()), 0);
  ASSERT_EQ(::mkfifo(dir.file("sub/model-00002-of-00002.zt").c_str(), 0644), 0);
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg = open_fails(good_index(), ZT_E_IO);
  EXPECT_NE(msg.find("is a FIFO, not a regular file"), std::string::npos) << msg;
  ASSERT_EQ(::unlink(dir.file("sub/model-00002-of-00002.zt").c_str()), 0);
  ASSERT_EQ(::mkdir(dir.file("sub/model-00002-of-00002.zt").c_str(), 0755), 0);
  msg = open_fails(good_index(), ZT_E_IO);
  EXPECT_NE(msg.find("is a directory, not a regular file"), std::string::npos) << msg;
  ASSERT_EQ(::mkfifo(dir.file("fifo.json").c_str(), 0644), 0);
  msg = open_fails(dir.file("fifo.json"), ZT_E_IO);
  EXPECT_NE(msg.find("is a FIFO"), std::string::npos) << msg;
  // zt_open itself, too.
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(dir.file("fifo.json").c_str(), nullptr, &f), ZT_E_IO);
  EXPECT_NE(std::string(zt_last_error()).find("is a FIFO"), std::string::npos) << zt_last_error();
  // Were the FIFO opened blocking, these calls would still be waiting.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
#endif
}

// A shard that is not a zTensor file: the message says so without quoting
// a byte of it (it could be a secret the index pointed at).
TEST_F(SetTest, NoByteOfAForeignShardIsQuoted) {
  write_file(dir.file("sub/model-00002-of-00002.zt"), "SECRET-k3y-material\n");
  const std::string msg = open_fails(good_index(), ZT_E_FORMAT);
  EXPECT_NE(msg.find("not a zTensor file"), std::string::npos) << msg;
  for (const char *piece : {"SECR", "k3y", "ECRET", "\\x0a"}) EXPECT_EQ(msg.find(piece), std::string::npos) << msg;
}

// Mapped shards do not keep a descriptor each: a set of many more shards
// than RLIMIT_NOFILE allows descriptors opens and reads (EMFILE at ~1,020
// shards under `ulimit -n 1024` before).
TEST_F(SetTest, ManyShardsOpenUnderALowDescriptorLimit) {
#ifdef _WIN32
  GTEST_SKIP() << "RLIMIT_NOFILE does not exist on Windows";
#else
  constexpr int kShards = 300;
  std::string wm;
  for (int i = 0; i < kShards; ++i) {
    const std::string name = "s" + std::to_string(i) + ".zt";
    write_shard(dir.file(name), {"t" + std::to_string(i)}, static_cast<float>(i), nullptr, /*sync=*/false);
    wm += std::string(i ? "," : "") + "\"t" + std::to_string(i) + "\": \"" + name + "\"";
  }
  const std::string idx = index("{\"weight_map\": {" + wm + "}}");
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit low = saved;
  low.rlim_cur = 128;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  zt_set *s = nullptr;
  const zt_status st = zt_open_set(idx.c_str(), nullptr, &s);
  const std::string err = zt_last_error();
  // Room for more descriptors while the set is open: it holds few.
  int probe[16];
  int opened = 0;
  for (int &p : probe)
    if ((p = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) ++opened;
  for (int i = 0; i < opened; ++i) ::close(probe[i]);
  float sum = 0;
  for (int i = 0; st == ZT_OK && i < kShards; ++i) {
    const zt_object *o = nullptr;
    const std::string name = "t" + std::to_string(i);
    float v[3] = {};
    if (zt_set_object_by_name(s, name.data(), name.size(), &o) == ZT_OK &&
        zt_component_read(o, 0, v, sizeof v, nullptr) == ZT_OK)
      sum += v[2];
  }
  zt_set_close(s);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_EQ(st, ZT_OK) << err;
  EXPECT_EQ(opened, 16);
  EXPECT_EQ(sum, static_cast<float>(kShards * (kShards - 1) / 2));
#endif
}

}  // namespace
