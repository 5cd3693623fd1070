// ztensor.hpp: owning handles, exceptions with status and message, views,
// typed reads and writes, iteration over objects, abandoned writers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "test_util.h"
#include "ztensor.hpp"

using zttest::TempDir;

namespace {

static_assert(!std::is_copy_constructible_v<ztensor::File>, "File owns its handle");
static_assert(std::is_nothrow_move_constructible_v<ztensor::File>, "File is movable");
static_assert(!std::is_copy_constructible_v<ztensor::Writer>, "Writer owns its handle");

zt_writer_options no_sync() {
  zt_writer_options o;
  zt_writer_options_init(&o);
  o.sync = 0;
  return o;
}

std::string write_sample(const TempDir &tmp) {
  const std::string path = tmp.file("sample.zt");
  zt_writer_options wo = no_sync();
  ztensor::Writer w(path, &wo);
  w.set_attributes_json(R"({"model":"tiny","step":3})");
  w.add<float>("weights", {2, 2}, std::vector<float>{1.f, 2.f, 3.f, 4.f});
  zt_blob_options zstd;
  zt_blob_options_init(&zstd);
  zstd.encoding = ZT_ENCODING_ZSTD;
  std::vector<int32_t> ids(300);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i % 7);
  w.add<int32_t>("ids", {300}, ids, &zstd);
  w.set_object_attributes_json("ids", R"({"vocab":7})");
  w.add("mask", {3}, std::vector<bool>{true, false, true});
  const bool flags[] = {false, true};
  w.add<bool>("flags", {2}, ztensor::Span<const bool>(flags, 2));
  w.begin_object("csr", "sparse_csr", {2, 2});
  const double vals[] = {5.0};
  const uint64_t indices[] = {1};
  const uint64_t indptr[] = {0, 1, 1};
  w.write_blob("csr", "values", ZT_F64, vals, sizeof vals);
  w.write_blob("csr", "indices", ZT_U64, indices, sizeof indices);
  w.write_blob("csr", "indptr", ZT_U64, indptr, sizeof indptr);
  w.finish();
  return path;
}

TEST(CppWrapper, WriteThenReadEverything) {
  TempDir tmp;
  ztensor::File f(write_sample(tmp));
  EXPECT_EQ(f.version(), "1.2.0");
  EXPECT_EQ(f.size(), 5u);
  EXPECT_NE(f.attributes_json().find("\"tiny\""), std::string::npos);

  ztensor::Object w = f["weights"];
  EXPECT_EQ(w.name(), "weights");
  EXPECT_EQ(w.format(), "dense");
  ASSERT_EQ(w.ndim(), 2u);
  EXPECT_EQ(w.shape()[0], 2u);
  EXPECT_EQ(w.numel(), 4u);
  EXPECT_EQ(w.status(), ZT_OK);
  EXPECT_EQ(w.read_as<float>("data"), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  if (zttest::kHostBigEndian) {  // no view of little-endian f32s there: reads swap
    try {
      w.view("data");
      ADD_FAILURE() << "a big-endian host must refuse a view of little-endian f32s";
    } catch (const ztensor::Error &e) {
      EXPECT_EQ(e.status(), ZT_E_NOT_ZERO_COPY);
    }
  } else {
    ztensor::ByteView bytes = w.view("data");
    ASSERT_EQ(bytes.size(), 16u);
    float second;
    std::memcpy(&second, bytes.data() + 4, 4);
    EXPECT_EQ(second, 2.f);
  }

  ztensor::Object ids = f.get("ids");
  ztensor::ComponentInfo ci = ids.component("data");
  EXPECT_EQ(ci.encoding, ZT_ENCODING_ZSTD);
  EXPECT_EQ(ci.decoded_length, 1200u);
  std::vector<int32_t> back = ids.read_as<int32_t>(0);
  ASSERT_EQ(back.size(), 300u);
  EXPECT_EQ(back[299], 299 % 7);
  EXPECT_EQ(ids.attributes_json(), R"({"vocab":7})");

  ztensor::Object mask = f["mask"];
  EXPECT_EQ(mask.read_as<bool>("data"), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(f["flags"].read_as<bool>(0), (std::vector<bool>{false, true}));

  ztensor::Object csr = f["csr"];
  EXPECT_EQ(csr.format(), "sparse_csr");
  EXPECT_EQ(csr.component_count(), 3u);
  EXPECT_TRUE(csr.has_component("indptr"));
  EXPECT_FALSE(csr.has_component("coords"));
  EXPECT_EQ(csr.read_as<uint64_t>("indptr"), (std::vector<uint64_t>{0, 1, 1}));
  f.verify(true);
}

TEST(CppWrapper, RangeForVisitsObjectsInManifestOrder) {
  TempDir tmp;
  ztensor::File f(write_sample(tmp));
  std::vector<std::string> names;
  for (ztensor::Object o : f) names.emplace_back(o.name());
  EXPECT_EQ(names, (std::vector<std::string>{"csr", "flags", "ids", "mask", "weights"}));
  EXPECT_TRUE(f.contains("mask"));
  EXPECT_FALSE(f.contains("nope"));
  EXPECT_FALSE(f.find("nope").has_value());
}

TEST(CppWrapper, ErrorsCarryStatusAndMessage) {
  TempDir tmp;
  try {
    ztensor::File f(tmp.file("missing.zt"));
    FAIL() << "opening a missing file must throw";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_IO);
    EXPECT_NE(std::string(e.what()).find("missing.zt"), std::string::npos) << e.what();
  }
  ztensor::File f(write_sample(tmp));
  try {
    f.get("absent");
    FAIL() << "a missing object must throw";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("absent"), std::string::npos) << e.what();
  }
  // zstd data has no borrowed view.
  try {
    f["ids"].view("data");
    FAIL() << "a zstd view must throw";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_NOT_ZERO_COPY);
  }
  EXPECT_THROW(f["weights"].read_as<double>("data"), ztensor::Error);
}

TEST(CppWrapper, MoveTransfersOwnershipAndCloseIsOnce) {
  TempDir tmp;
  ztensor::File a(write_sample(tmp));
  ztensor::File b(std::move(a));
  EXPECT_FALSE(a.is_open());
  EXPECT_TRUE(b.is_open());
  EXPECT_EQ(b.size(), 5u);
  ztensor::File c = std::move(b);
  c.close();
  EXPECT_FALSE(c.is_open());
}

TEST(CppWrapper, WriterLeftUnfinishedLeavesNothing) {
  TempDir tmp;
  const std::string path = tmp.file("abandoned.zt");
  {
    zt_writer_options wo = no_sync();
    ztensor::Writer w(path, &wo);
    w.add<double>("x", {1}, std::vector<double>{1.0});
  }  // destroyed without finish()
  EXPECT_TRUE(zttest::read_file(path).empty());
  // No temporary either: the directory holds nothing.
  std::string cmd = "test -z \"$(ls -A '" + tmp.path() + "')\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(CppWrapper, ReadsInteropFileFromMemory) {
  const std::string dir = zttest::interop_dir();
  const std::string bytes = zttest::read_file(dir + "/v1/dense_f32.zt");
  ASSERT_FALSE(bytes.empty());
  ztensor::File f = ztensor::File::from_memory(bytes.data(), bytes.size());
  size_t count = 0;
  for (ztensor::Object o : f) {
    ++count;
    const std::vector<uint8_t> decoded = o.read(0);
    if (zttest::kHostBigEndian) {  // the stored little-endian bytes are the read's, swapped back
      EXPECT_THROW(o.view(0), ztensor::Error);
      continue;
    }
    ztensor::ByteView v = o.view(0);
    EXPECT_EQ(zttest::sha256_hex(v.data(), v.size()), zttest::sha256_hex(decoded.data(), decoded.size()));
  }
  EXPECT_EQ(count, f.size());
  EXPECT_GT(count, 0u);
}

}  // namespace
