// ztensor.hpp: owning handles, exceptions with status and message, views,
// typed reads and writes, iteration over objects, abandoned writers; option
// structs, any contiguous container, typed views, ranged and batched reads,
// streaming writes, composite objects, editing, verification reports, DLPack.
#include <gtest/gtest.h>

#include <array>
#include <complex>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
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
static_assert(!std::is_copy_constructible_v<ztensor::Set>, "Set owns its handle");
static_assert(std::is_nothrow_move_constructible_v<ztensor::Set>, "Set is movable");

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

// Handles made by C calls the wrapper does not cover (zt_open_url, the
// zt tool's own option handling) are taken over and given back.
TEST(CppWrapper, AdoptAndReleaseHandOwnershipOver) {
  TempDir tmp;
  const std::string path = write_sample(tmp);
  ztensor::File empty;
  EXPECT_FALSE(empty.is_open());
  zt_file *raw = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &raw), ZT_OK);
  ztensor::File f = ztensor::File::adopt(raw);
  EXPECT_TRUE(f.is_open());
  EXPECT_EQ(f.handle(), raw);
  EXPECT_EQ(f.size(), 5u);
  zt_file *back = f.release();
  EXPECT_EQ(back, raw);
  EXPECT_FALSE(f.is_open());
  // Still open: release did not close it, and closing it now is the first close.
  size_t n = 0;
  EXPECT_EQ(zt_file_object_count(back, &n), ZT_OK);
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(zt_close(back), ZT_OK);

  // An adopted writer left unfinished is discarded; a released one is the caller's.
  const std::string out = tmp.file("adopted.zt");
  zt_writer_options wo = no_sync();
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(out.c_str(), &wo, &w), ZT_OK);
  { ztensor::Writer owner = ztensor::Writer::adopt(w); }
  EXPECT_TRUE(zttest::read_file(out).empty());
  ASSERT_EQ(zt_writer_create(out.c_str(), &wo, &w), ZT_OK);
  {
    ztensor::Writer owner = ztensor::Writer::adopt(w);
    EXPECT_TRUE(owner.is_open());
    owner.add<double>("x", {1}, std::vector<double>{2.0});
    EXPECT_EQ(zt_writer_finish(owner.release()), ZT_OK);
    EXPECT_FALSE(owner.is_open());
  }
  EXPECT_EQ(ztensor::File(out).get("x").read_as<double>("data"), std::vector<double>{2.0});
}

TEST(CppWrapper, SetOpensShardsAndFindsObjects) {
  TempDir tmp;
  zt_writer_options wo = no_sync();
  {
    ztensor::Writer a(tmp.file("part-1.zt"), &wo);
    a.add<float>("a", {2}, std::vector<float>{1.f, 2.f});
    a.finish();
    ztensor::Writer b(tmp.file("part-2.zt"), &wo);
    b.add<int32_t>("b", {1}, std::vector<int32_t>{7});
    b.finish();
  }
  const std::string index = tmp.file("model.zt.index.json");
  std::ofstream(index) << R"({"metadata": {"step": 3}, "weight_map": {"b": "part-2.zt", "a": "part-1.zt"}})";
  ztensor::Set s(index);
  EXPECT_TRUE(s.is_open());
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.at(0).name(), "a");
  EXPECT_EQ(s.get("b").read_as<int32_t>("data"), std::vector<int32_t>{7});
  EXPECT_EQ(s.metadata_json(), R"({"step":3})");
  ASSERT_EQ(s.shard_count(), 2u);
  EXPECT_EQ(s.shard_location(1), "part-2.zt");
  try {
    (void)s.get("missing");
    FAIL() << "expected ztensor::Error";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_NOT_FOUND);
  }
  ztensor::Set moved = std::move(s);
  EXPECT_FALSE(s.is_open());
  zt_set *raw = moved.release();
  ztensor::Set again = ztensor::Set::adopt(raw);
  EXPECT_EQ(again.handle(), raw);
  again.close();
  EXPECT_FALSE(again.is_open());
  try {
    ztensor::Set bad(tmp.file("missing.zt.index.json"));
    FAIL() << "expected ztensor::Error";
  } catch (const ztensor::Error &e) {
    EXPECT_NE(e.status(), ZT_OK);
  }
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

// A safetensors file whose header is padded to an odd length puts its f32
// data at an odd address: view() and view_as<float>() refuse it (typed),
// view_unaligned() lends the bytes in place.
TEST(CppWrapper, ViewUnalignedLendsMisalignedForeignData) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f};
  std::string header = R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
  if ((8 + header.size()) % 2 == 0) header += ' ';
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  bytes += header + zttest::le_bytes(values);
  std::vector<uint64_t> buf((bytes.size() + 7) / 8);  // 8-aligned: the data's address is odd
  std::memcpy(buf.data(), bytes.data(), bytes.size());
  ztensor::File f = ztensor::File::from_memory(buf.data(), bytes.size());
  ztensor::Object w = f["w"];
  if (zttest::kHostBigEndian) {
    EXPECT_THROW(w.view_unaligned("data"), ztensor::Error);
    return;
  }
  EXPECT_THROW(w.view("data"), ztensor::Error);
  EXPECT_THROW(w.view_as<float>("data"), ztensor::Error);
  ztensor::ByteView v = w.view_unaligned("data");
  ASSERT_EQ(v.size(), 12u);
  EXPECT_EQ(v.data(), reinterpret_cast<const uint8_t *>(buf.data()) + 8 + header.size());
  std::vector<float> got(3);
  std::memcpy(got.data(), v.data(), 12);
  EXPECT_EQ(got, values);
}

TEST(CppWrapper, AddsAnyContiguousContainerAndComplex) {
  TempDir tmp;
  const std::string path = tmp.file("containers.zt");
  ztensor::WriterOptions wo;
  wo.sync = false;
  {
    ztensor::Writer w(path, wo);
    w.add("arr", {2, 3}, std::array<float, 6>{1, 2, 3, 4, 5, 6});
    const int16_t carray[4] = {-1, 2, -3, 4};
    w.add("carr", {4}, carray);
    const std::vector<std::complex<float>> z = {{1.f, -1.f}, {0.5f, 2.f}};
    w.add("z", {2}, z);
    w.add("z128", {1}, std::array<std::complex<double>, 1>{std::complex<double>(3.0, 4.0)});
    const std::vector<ztensor::bf16> halves = {{0x3F80}, {0x4000}};  // 1.0, 2.0
    w.add("h", {2}, halves, ztensor::BlobOptions::zstd(5));
    w.finish();
  }
  ztensor::File f(path);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"arr", "carr", "h", "z", "z128"}));
  if (zttest::kHostBigEndian) {  // no view of little-endian f32s there (docs/cross.md): reads swap
    EXPECT_THROW(f["arr"].view_as<float>("data"), ztensor::Error);
    EXPECT_EQ(f["arr"].read_as<float>("data"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  } else {
    ztensor::Span<const float> arr = f["arr"].view_as<float>("data");
    ASSERT_EQ(arr.size(), 6u);
    EXPECT_EQ(arr[5], 6.f);
  }
  EXPECT_EQ(f["carr"].read_as<int16_t>(0), (std::vector<int16_t>{-1, 2, -3, 4}));

  ztensor::Object z = f["z"];
  EXPECT_EQ(z.component(0).logical_type.value_or(""), "complex64");
  EXPECT_EQ(z.read_as<std::complex<float>>(0), (std::vector<std::complex<float>>{{1.f, -1.f}, {0.5f, 2.f}}));
  if (!zttest::kHostBigEndian) EXPECT_EQ(z.view_as<std::complex<float>>(0)[1], std::complex<float>(0.5f, 2.f));
  // A complex component is not plain f32 elements, and the reverse.
  EXPECT_THROW(z.view_as<float>(0), ztensor::Error);
  EXPECT_THROW(f["arr"].read_as<std::complex<float>>(0), ztensor::Error);
  EXPECT_EQ(f["z128"].read_as<std::complex<double>>(0)[0], std::complex<double>(3.0, 4.0));

  ztensor::Object h = f["h"];
  EXPECT_EQ(h.component(0).encoding, ZT_ENCODING_ZSTD);
  EXPECT_EQ(h.read_f32(0), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(h.read_as<ztensor::bf16>(0)[1].bits, 0x4000);
}

TEST(CppWrapper, OptionStructsKeepDefaultsAndApplySettings) {
  TempDir tmp;
  const std::string path = tmp.file("opts.zt");
  ztensor::WriterOptions wo;
  wo.sync = false;
  wo.digest = ZT_DIGEST_SHA256;
  wo.encoding = ZT_ENCODING_ZSTD;
  {
    ztensor::Writer w(path, wo);
    std::vector<uint32_t> v(1000, 7);
    w.add("v", {1000}, v);
    ztensor::BlobOptions raw;
    raw.encoding = ZT_ENCODING_RAW;
    raw.digest = ZT_DIGEST_CRC32C;
    w.add("r", {1000}, v, raw);
    w.finish();
  }
  // Defaults: equivalent to NULL options.
  ztensor::File plain(path, ztensor::OpenOptions{});
  ztensor::ComponentInfo v = plain["v"].component(0);
  EXPECT_EQ(v.encoding, ZT_ENCODING_ZSTD);
  EXPECT_EQ(v.digest_alg, ZT_DIGEST_SHA256);
  EXPECT_EQ(plain["r"].component(0).digest_alg, ZT_DIGEST_CRC32C);
  if (zttest::kHostBigEndian)  // no view of little-endian u32s there: reads swap
    EXPECT_THROW(plain["r"].view_as<uint32_t>(0), ztensor::Error);
  else
    EXPECT_EQ(plain["r"].view_as<uint32_t>(0)[999], 7u);

  ztensor::OpenOptions pread;
  pread.access = ztensor::Access::Pread;
  ztensor::File p(path, pread);
  try {
    p["r"].view(0);
    FAIL() << "pread access has no views";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_NOT_ZERO_COPY);
  }
  EXPECT_EQ(p["r"].read_as<uint32_t>(0).size(), 1000u);

  ztensor::OpenOptions ahead;
  ahead.prefetch = true;
  EXPECT_EQ(ahead.to_c().prefetch, 1u);
  ztensor::File pf(path, ahead);
  EXPECT_EQ(pf["r"].read_as<uint32_t>(0)[999], 7u);
  EXPECT_EQ(ztensor::OpenOptions{}.to_c().prefetch, 0u);

  ztensor::OpenOptions small;
  small.max_decoded_size = 100;
  ztensor::File s(path, small);
  try {
    s["v"].read(0);
    FAIL() << "a component above max_decoded_size must be refused";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_LIMIT) << e.what();
  }
}

TEST(CppWrapper, RangedBatchedAndStreamedAgreeWithWholeReads) {
  TempDir tmp;
  const std::string path = tmp.file("ranges.zt");
  std::vector<int32_t> ints(5000);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int32_t>(i * 3 - 7);
  {
    ztensor::WriterOptions wo;
    wo.sync = false;
    ztensor::Writer w(path, wo);
    w.add("raw", {5000}, ints);
    w.add("zst", {50, 100}, ints, ztensor::BlobOptions::zstd());
    // The same bytes in three pieces.
    w.begin_object("streamed", "dense", {5000});
    w.begin_blob("streamed", "data", ZT_I32, ztensor::BlobOptions::zstd());
    w.append(ztensor::Span<const int32_t>(ints.data(), 1234));
    w.append(ints.data() + 1234, (3000 - 1234) * sizeof(int32_t));
    w.append(ztensor::Span<const int32_t>(ints.data() + 3000, 2000));
    w.end_blob();
    w.finish();
  }
  ztensor::File f(path);
  for (const char *name : {"raw", "zst", "streamed"}) {
    SCOPED_TRACE(name);
    ztensor::Object o = f[name];
    EXPECT_EQ(o.read_as<int32_t>(0), ints);
    EXPECT_EQ(o.read_range_as<int32_t>(0, 4990, 10), std::vector<int32_t>(ints.begin() + 4990, ints.end()));
    std::vector<uint8_t> r = o.read_range(0, 1, 2);
    ASSERT_EQ(r.size(), 8u);
    EXPECT_EQ(std::memcmp(r.data(), ints.data() + 1, 8), 0);
    EXPECT_THROW(o.read_range(0, 4999, 2), ztensor::Error);
    std::vector<int32_t> into(5000);
    EXPECT_EQ(o.read_into(0, into.data(), into.size() * 4), 20000u);
    EXPECT_EQ(into, ints);
    try {
      o.read_into(0, into.data(), 100);
      FAIL() << "a small buffer must be refused";
    } catch (const ztensor::Error &e) {
      EXPECT_EQ(e.status(), ZT_E_BUFFER_TOO_SMALL);
    }
  }
  std::vector<std::vector<uint8_t>> all = f.read_all({"zst", "raw", "streamed"});
  ASSERT_EQ(all.size(), 3u);
  for (const std::vector<uint8_t> &b : all) {
    ASSERT_EQ(b.size(), 20000u);
    EXPECT_EQ(std::memcmp(b.data(), ints.data(), b.size()), 0);
  }
  // Each request reports its own status; a too-small buffer throws after all ran.
  std::vector<int32_t> a(5000), b(10);
  std::vector<ztensor::File::ReadRequest> reqs = {{f["raw"].handle(), 0, a.data(), 20000, 0, ZT_OK},
                                                  {f["zst"].handle(), 0, b.data(), 40, 0, ZT_OK}};
  EXPECT_THROW(f.read_many(reqs), ztensor::Error);
  EXPECT_EQ(reqs[0].status, ZT_OK);
  EXPECT_EQ(a, ints);
  EXPECT_EQ(reqs[1].status, ZT_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(reqs[1].out_size, 20000u);
}

TEST(CppWrapper, CompositeObjects) {
  TempDir tmp;
  const std::string path = tmp.file("composite.zt");
  {
    ztensor::WriterOptions wo;
    wo.sync = false;
    ztensor::Writer w(path, wo);
    w.add_csr<double>("csr", 2, 3, {1.5, -2.0}, {2, 0}, {0, 1, 2});
    w.add_coo<float>("coo", {2, 2}, {4.f, 5.f}, {0, 1, 1, 0});
    zt_quant_params q;
    zt_quant_params_init(&q);
    const int32_t words[4] = {0, 0, 0, 0};
    const uint16_t scales[4] = {0x3C00, 0x3C00, 0x3C00, 0x3C00};  // f16 1.0
    q.group_size = 8;
    q.packed = words;
    q.packed_len = sizeof words;
    q.scales = scales;
    q.scales_len = sizeof scales;
    w.add_quantized_group("q", {2, 16}, q);
    // Checked before anything is written: the writer stays usable.
    EXPECT_THROW(w.add_csr<double>("bad", 2, 3, {1.0}, {0, 1}, {0, 1, 1}), ztensor::Error);
    EXPECT_THROW(w.add_csr<double>("bad", 2, 3, {1.0}, {7}, {0, 1, 1}), ztensor::Error);
    w.finish();
  }
  ztensor::File f(path);
  EXPECT_FALSE(f.contains("bad"));
  ztensor::Object csr = f["csr"];
  EXPECT_TRUE(csr.is_sparse());
  zt_sparse_info si = csr.sparse_info();
  EXPECT_EQ(si.nnz, 2u);
  EXPECT_EQ(si.is_csr, 1u);
  EXPECT_EQ(csr.read_index("indptr"), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(csr.densify_as<double>(), (std::vector<double>{0, 0, 1.5, -2.0, 0, 0}));
  EXPECT_THROW(csr.densify_as<float>(), ztensor::Error);
  csr.validate();
  EXPECT_EQ(f["coo"].densify_as<float>(), (std::vector<float>{0, 4.f, 5.f, 0}));
  ztensor::Object q = f["q"];
  EXPECT_FALSE(q.is_sparse());
  EXPECT_EQ(q.quant_info().groups, 4u);
  EXPECT_EQ(q.dequantize(), std::vector<float>(32, -8.f));  // q = 0, zero point 8, scale 1
  EXPECT_THROW(q.sparse_info(), ztensor::Error);
}

TEST(CppWrapper, EditMigrateAndVerifyReports) {
  TempDir tmp;
  const std::string src = write_sample(tmp);
  const std::string copy = tmp.file("copy.zt");
  {
    ztensor::File in(src);
    ztensor::WriterOptions wo;
    wo.sync = false;
    wo.digest = ZT_DIGEST_SHA256;
    ztensor::Writer w(copy, wo);
    w.copy_file_fields({&in});
    w.copy_object(in["weights"], std::string_view("w2"));
    w.copy_object(in["csr"]);
    w.finish();
  }
  ztensor::File c(copy);
  EXPECT_EQ(c.names(), (std::vector<std::string>{"csr", "w2"}));
  EXPECT_EQ(c["w2"].read_as<float>(0), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  EXPECT_NE(c.attributes_json().find("tiny"), std::string::npos);
  EXPECT_FALSE(c.attributes_cbor().empty());
  EXPECT_TRUE(c.extra_fields_cbor().empty());
  EXPECT_TRUE(c.verify_all(true).empty());
  EXPECT_EQ(c["w2"].verify_component(0), ZT_VERIFY_NO_DIGEST);  // copies keep "no digest"
  c.close();

  const std::string migrated = tmp.file("migrated.zt");
  ztensor::MigrateOptions mo;
  mo.recompress = -1;
  mo.digest = ZT_DIGEST_SHA256;
  mo.sync = false;
  ztensor::migrate(copy, migrated, mo);
  EXPECT_EQ(ztensor::File(migrated)["w2"].component(0).encoding, ZT_ENCODING_RAW);
  EXPECT_EQ(ztensor::File(migrated)["w2"].verify_component(0), ZT_VERIFY_OK);
  EXPECT_THROW(ztensor::migrate(copy, copy), ztensor::Error);

  // Damage the w2 payload: the report names the object and the status.
  ztensor::ComponentInfo ci = ztensor::File(migrated)["w2"].component(0);
  std::string bytes = zttest::read_file(migrated);
  bytes[static_cast<size_t>(ci.offset)] ^= 0x40;
  zttest::write_file(migrated, bytes);
  ztensor::File damaged(migrated);
  std::vector<ztensor::File::VerifyFailure> bad = damaged.verify_all();
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].object, "w2");
  EXPECT_EQ(bad[0].status, ZT_E_DIGEST_MISMATCH);
  EXPECT_FALSE(bad[0].message.empty());
}

#ifdef ZTENSOR_HPP_HAS_DLPACK
TEST(CppWrapper, DLPackTensorOwnsItsReference) {
  TempDir tmp;
  ztensor::Object::DLPackTensor t;
  {
    ztensor::File f(write_sample(tmp));
    t = f["weights"].to_dlpack();
  }  // the File is closed; the tensor keeps the mapping alive
  ASSERT_TRUE(t);
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[1], 2);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(reinterpret_cast<const float *>(static_cast<const char *>(t->dl_tensor.data) + t->dl_tensor.byte_offset)[3],
            4.f);
}
#endif

TEST(CppWrapper, LibraryVersionMatchesHeader) {
  EXPECT_EQ(ztensor::library_version(), std::to_string(ZT_VERSION_MAJOR) + "." + std::to_string(ZT_VERSION_MINOR) +
                                            "." + std::to_string(ZT_VERSION_PATCH));
}

TEST(CppWrapper, SlicesStreamsMemoryWritersAndVerifyOnRead) {
  std::vector<float> v(6 * 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  std::vector<uint8_t> file;
  {
    ztensor::WriterOptions wo;
    wo.digest = ZT_DIGEST_CRC32C;
    ztensor::Writer w = ztensor::Writer::memory(wo);
    w.add("m", {6, 5}, v);
    w.add("mz", {6, 5}, v, ztensor::BlobOptions::zstd());
    w.add("c", {3}, std::vector<std::complex<float>>{{1, 2}, {3, 4}, {5, 6}});
    file = w.finish_memory();
  }
  ASSERT_GT(file.size(), 64u);
  // The same calls through a callback give the same bytes.
  std::vector<uint8_t> sent;
  {
    ztensor::WriterOptions wo;
    wo.digest = ZT_DIGEST_CRC32C;
    ztensor::Writer w = ztensor::Writer::to_sink(
        [&](const void *p, size_t n) {
          sent.insert(sent.end(), static_cast<const uint8_t *>(p), static_cast<const uint8_t *>(p) + n);
          return true;
        },
        wo);
    w.add("m", {6, 5}, v);
    w.add("mz", {6, 5}, v, ztensor::BlobOptions::zstd());
    w.add("c", {3}, std::vector<std::complex<float>>{{1, 2}, {3, 4}, {5, 6}});
    w.finish();
  }
  EXPECT_EQ(sent, file);
  {
    ztensor::Writer w = ztensor::Writer::to_sink([](const void *, size_t) -> bool { throw std::runtime_error("x"); });
    w.add("m", {6, 5}, v);
    EXPECT_THROW(w.finish(), ztensor::Error) << "a failing sink fails the writer";
  }

  ztensor::File f = ztensor::File::from_memory(file.data(), file.size());
  for (const char *name : {"m", "mz"}) {
    SCOPED_TRACE(name);
    // a[1:4, 2:5]
    std::vector<float> box = f[name].read_slice_as<float>(0, {1, 2}, {4, 5});
    EXPECT_EQ(box, (std::vector<float>{7, 8, 9, 12, 13, 14, 17, 18, 19}));
    EXPECT_TRUE(f[name].read_slice(0, {0, 0}, {0, 5}).empty());
    EXPECT_THROW(f[name].read_slice(0, {0, 0}, {7, 5}), ztensor::Error);
    EXPECT_THROW(f[name].read_slice(0, {0}, {1}), ztensor::Error);
    // Streamed in pieces of 7 floats.
    ztensor::Object::Stream st = f[name].stream("data");
    std::vector<float> all, piece(7);
    while (size_t n = st.read(piece.data(), piece.size() * sizeof(float)))
      all.insert(all.end(), piece.begin(), piece.begin() + static_cast<std::ptrdiff_t>(n / sizeof(float)));
    EXPECT_EQ(all, v);
  }
  EXPECT_EQ(f["c"].read_slice_as<std::complex<float>>(0, {1}, {3}), (std::vector<std::complex<float>>{{3, 4}, {5, 6}}));

  // Damage one stored byte of "m": with verify_on_read every read refuses it.
  std::vector<uint8_t> bad = file;
  bad[static_cast<size_t>(f["m"].component(0).offset)] ^= 1;
  ztensor::OpenOptions checked;
  checked.verify_on_read = true;
  ztensor::File g = ztensor::File::from_memory(bad.data(), bad.size(), checked);
  try {
    g["m"].read_as<float>(0);
    FAIL() << "a damaged component was read with verify_on_read";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_DIGEST_MISMATCH) << e.what();
  }
  EXPECT_THROW(g["m"].read_slice(0, {0, 0}, {1, 1}), ztensor::Error);
  EXPECT_EQ(g["mz"].read_as<float>(0), v) << "undamaged components still read";
  ztensor::File unchecked = ztensor::File::from_memory(bad.data(), bad.size());
  EXPECT_EQ(unchecked["m"].read_as<float>(0).size(), v.size()) << "off by default";
}

// Attribute values are checked without parse nodes at open; an object that
// is itself named "attributes" (or has a component of that role) is not an
// attribute value and must decode in full.
TEST(CppWrapper, ObjectsNamedAttributesReadInFull) {
  TempDir tmp;
  const std::string path = tmp.file("names.zt");
  {
    ztensor::WriterOptions wo;
    wo.sync = false;
    ztensor::Writer w(path, wo);
    w.set_attributes_json(R"({"attributes": [1, 2, 3], "k": {"attributes": 1}})");
    w.add("attributes", {3}, std::vector<float>{1.f, 2.f, 3.f});
    w.set_object_attributes_json("attributes", R"({"attributes": {"nested": [4, 5]}})");
    w.begin_object("o", "dense", {2});
    const double d[2] = {7.0, 8.0};
    w.write_blob("o", "data", ZT_F64, d, sizeof d);
    w.finish();
  }
  for (const auto access : {ztensor::Access::Mmap, ztensor::Access::Pread}) {
    ztensor::OpenOptions oo;
    oo.access = access;
    oo.strict = true;
    ztensor::File f(path, oo);
    EXPECT_EQ(f.names(), (std::vector<std::string>{"attributes", "o"}));
    ztensor::Object a = f["attributes"];
    EXPECT_EQ(a.status(), ZT_OK) << a.error();
    EXPECT_EQ(a.read_as<float>("data"), (std::vector<float>{1.f, 2.f, 3.f}));
    EXPECT_EQ(a.attributes_json(), R"({"attributes":{"nested":[4,5]}})");
    EXPECT_EQ(f["o"].read_as<double>(0), (std::vector<double>{7.0, 8.0}));
    EXPECT_EQ(f.attributes_json(), R"({"attributes":[1,2,3],"k":{"attributes":1}})");
    f.verify(true);
  }
}

}  // namespace

// Since 1.3: WriterOptions::format = 2 writes zTensor v2, canonical by
// default (the same bytes whatever order the tensors come in); canonical =
// false takes an alignment and a v2 digest (docs/v2.md, Writing).
TEST(CppWrapper, WritesV2) {
  TempDir tmp;
  auto write = [&](const std::string &path, bool reversed, const ztensor::WriterOptions &wo) {
    ztensor::Writer w(path, wo);
    const std::vector<float> a = {1, 2, 3}, b = {4, 5};
    if (reversed) {
      w.add("b", {2}, b);
      w.add("a", {3}, a);
    } else {
      w.add("a", {3}, a);
      w.add("b", {2}, b);
    }
    w.finish();
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  ztensor::WriterOptions wo;
  wo.sync = false;
  wo.format = 2;
  const std::string x = write(tmp.file("x.zt"), false, wo), y = write(tmp.file("y.zt"), true, wo);
  EXPECT_EQ(x.substr(0, 8), std::string("\x89ZT2\r\n\x1a\n", 8));
  EXPECT_EQ(x, y);
  float first;  // "a", first in name order, at 64 KiB, stored little-endian
  const std::vector<uint8_t> host = zttest::le_to_host(x.data() + 65536, 4, 4);
  std::memcpy(&first, host.data(), 4);
  EXPECT_EQ(first, 1.f);
  wo.canonical = false;
  wo.alignment = 4096;
  wo.v2_digest = ZT_DIGEST_SHA256;
  const std::string z = write(tmp.file("z.zt"), false, wo);
  EXPECT_NE(z.find("sha256:"), std::string::npos);
  EXPECT_LT(z.size(), x.size());
}
