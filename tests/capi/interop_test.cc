// Every file the reference implementation wrote (tests/data/interop) is read
// through the public C API and compared with expected.json: versions,
// attributes, objects, shapes, formats, components, the SHA-256 of every
// decoded component, and digest verification. Negative vectors are refused
// at the level docs/reading-rules.md assigns them.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

using nlohmann::json;
using zttest::env_or;
using zttest::read_file;
using zttest::sha256_hex;

namespace {

std::string interop_dir() {
  return zttest::interop_dir();
}

json load_expected(const std::string &dir) {
  return json::parse(zttest::read_required_file(dir + "/expected.json"));
}

json attributes_json(char *s) {
  json j = json::parse(s);
  zt_free(s);
  return j;
}

// Compares one file with its expected.json entry; `opts` chooses the access.
void check_file(const std::string &path, const json &exp, const zt_open_options *opts) {
  SCOPED_TRACE(path);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), opts, &f), ZT_OK) << zt_last_error();
  const char *version = nullptr;
  ASSERT_EQ(zt_file_version(f, &version), ZT_OK);
  EXPECT_EQ(std::string(version), exp["version"].get<std::string>());
  char *attrs = nullptr;
  ASSERT_EQ(zt_file_attributes_json(f, &attrs), ZT_OK);
  EXPECT_EQ(attributes_json(attrs), exp["attributes"]);

  size_t count = 0;
  ASSERT_EQ(zt_file_object_count(f, &count), ZT_OK);
  ASSERT_EQ(count, exp["objects"].size());
  for (const auto &eo : exp["objects"]) {
    std::string name = eo["name"];
    SCOPED_TRACE("object " + name);
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(f, name.data(), name.size(), &o), ZT_OK) << zt_last_error();
    zt_object_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
    EXPECT_EQ(info.status, ZT_OK);
    EXPECT_EQ(std::string(info.name, info.name_len), name);
    EXPECT_EQ(std::vector<uint64_t>(info.shape, info.shape + info.ndim), eo["shape"].get<std::vector<uint64_t>>());
    EXPECT_EQ(std::string(info.format), eo["format"].get<std::string>());
    char *oattrs = nullptr;
    ASSERT_EQ(zt_object_attributes_json(o, &oattrs), ZT_OK);
    EXPECT_EQ(attributes_json(oattrs), eo["attributes"]);
    ASSERT_EQ(info.component_count, eo["components"].size());
    for (const auto &ec : eo["components"]) {
      std::string role = ec["role"];
      SCOPED_TRACE("component " + role);
      size_t idx = 0;
      ASSERT_EQ(zt_object_component_index(o, role.c_str(), &idx), ZT_OK);
      zt_component_info c{};
      c.struct_size = sizeof c;
      ASSERT_EQ(zt_object_component(o, idx, &c), ZT_OK);
      EXPECT_EQ(std::string(c.dtype_name), ec["dtype"].get<std::string>());
      EXPECT_EQ(zt_dtype_name(c.dtype), ec["dtype"].get<std::string>());
      if (ec["type"].is_null()) {
        EXPECT_EQ(c.logical_type, nullptr);
      } else {
        EXPECT_EQ(std::string(c.logical_type ? c.logical_type : "<none>"), ec["type"].get<std::string>());
      }
      EXPECT_EQ(std::string(c.encoding_name), ec["encoding"].get<std::string>());
      EXPECT_EQ(c.decoded_length, ec["decoded_length"].get<uint64_t>());
      if (ec["digest"].is_null()) {
        EXPECT_EQ(c.digest, nullptr);
      } else {
        EXPECT_EQ(std::string(c.digest ? c.digest : ""), ec["digest"].get<std::string>());
      }

      size_t size = 0;
      EXPECT_EQ(zt_component_read(o, idx, nullptr, 0, &size),
                ec["decoded_length"].get<uint64_t>() == 0 ? ZT_OK : ZT_E_BUFFER_TOO_SMALL);
      std::vector<uint8_t> buf(size + 1);
      ASSERT_EQ(zt_component_read(o, idx, buf.data(), buf.size(), &size), ZT_OK) << zt_last_error();
      const size_t esize = zt_dtype_size(c.dtype);
      EXPECT_EQ(zttest::sha256_le_hex(buf.data(), size, esize), ec["sha256"].get<std::string>());

      zt_verify_result vr;
      ASSERT_EQ(zt_component_verify(o, idx, &vr), ZT_OK) << zt_last_error();
      EXPECT_EQ(vr, ec["digest"].is_null() ? ZT_VERIFY_NO_DIGEST : ZT_VERIFY_OK);

      // Views: raw components of a mapped file stored in the host's byte
      // order are zero-copy and equal to the decoded bytes; everything else
      // says why not.
      const void *view = nullptr;
      size_t vlen = 0;
      zt_status vs = zt_component_view(o, idx, &view, &vlen);
      const bool host_order = esize <= 1 || (c.big_endian != 0) == zttest::kHostBigEndian;
      bool viewable = c.encoding == ZT_ENCODING_RAW && host_order && (!opts || opts->access == ZT_ACCESS_MMAP);
      if (viewable) {
        ASSERT_EQ(vs, ZT_OK) << zt_last_error();
        EXPECT_EQ(zttest::sha256_le_hex(view, vlen, esize), ec["sha256"].get<std::string>());
      } else {
        EXPECT_EQ(vs, ZT_E_NOT_ZERO_COPY);
      }
    }
  }
  EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_close(f), ZT_OK);
}

void check_dir(const std::string &dir) {
  json exp = load_expected(dir);
  ASSERT_GT(exp["files"].size(), 0u);
  zt_open_options pread_opts;
  zt_open_options_init(&pread_opts);
  pread_opts.access = ZT_ACCESS_PREAD;
  for (auto it = exp["files"].begin(); it != exp["files"].end(); ++it) {
    check_file(dir + "/" + it.key(), it.value(), nullptr);
    check_file(dir + "/" + it.key(), it.value(), &pread_opts);
    // The same bytes opened from memory.
    std::string bytes = read_file(dir + "/" + it.key());
    zt_file *m = nullptr;
    ASSERT_EQ(zt_open_memory(bytes.data(), bytes.size(), nullptr, &m), ZT_OK) << it.key();
    EXPECT_EQ(zt_file_verify(m, 0, nullptr, nullptr), ZT_OK) << it.key();
    zt_close(m);
  }
}

}  // namespace

TEST(Interop, V1FilesMatchExpected) {
  check_dir(interop_dir() + "/v1");
}

TEST(Interop, LegacyV0FilesMatchExpected) {
  check_dir(interop_dir() + "/v0");
}

// docs/reading-rules.md: root damage refuses the open; damage to one
// object fails that object only (lenient), and the strict open refuses.
TEST(Interop, NegativeVectorsAreRefusedAtTheRightLevel) {
  const std::string dir = interop_dir() + "/v1/negative";
  struct Case {
    const char *file;
    zt_status status;
    bool at_open;
  };
  const Case cases[] = {
      {"bad_header_magic.zt", ZT_E_FORMAT, true},
      {"bad_footer_magic.zt", ZT_E_FOOTER, true},
      {"truncated.zt", ZT_E_FOOTER, true},
      {"manifest_size_too_big.zt", ZT_E_MANIFEST_SIZE, true},
      {"manifest_size_over_1gb.zt", ZT_E_MANIFEST_LIMIT, true},
      {"manifest_not_a_map.zt", ZT_E_MANIFEST, true},
      {"missing_version.zt", ZT_E_VERSION, true},
      {"bad_crc32c.zt", ZT_E_DIGEST_MISMATCH, false},
      {"bad_sha256_zstd.zt", ZT_E_DIGEST_MISMATCH, false},
      {"bad_crc_hex.zt", ZT_E_DIGEST_FORMAT, false},
      {"misaligned_offset.zt", ZT_E_ALIGNMENT, false},
      {"out_of_bounds.zt", ZT_E_BOUNDS, false},
      {"dense_length_mismatch.zt", ZT_E_LENGTH, false},
      {"zstd_bad_uncompressed_length.zt", ZT_E_LENGTH, false},
      {"zstd_corrupt_frame.zt", ZT_E_CORRUPT, false},
      {"missing_format.zt", ZT_E_FIELD, false},
      {"unknown_dtype.zt", ZT_E_DTYPE, false},
      {"unknown_encoding.zt", ZT_E_ENCODING, false},
  };
  json exp = load_expected(dir);
  EXPECT_EQ(exp["files"].size(), sizeof cases / sizeof cases[0]) << "a negative vector is not covered";
  for (const Case &c : cases) {
    SCOPED_TRACE(c.file);
    ASSERT_TRUE(exp["files"].contains(c.file));
    std::string path = dir + "/" + c.file;
    zt_file *f = nullptr;
    zt_status st = zt_open(path.c_str(), nullptr, &f);
    if (c.at_open) {
      EXPECT_EQ(st, c.status) << zt_last_error();
      EXPECT_EQ(f, nullptr);
      EXPECT_STRNE(zt_last_error(), "");
      continue;
    }
    ASSERT_EQ(st, ZT_OK) << zt_last_error();
    // Exactly one damaged object; the others read.
    size_t count = 0, damaged = 0;
    zt_file_object_count(f, &count);
    for (size_t i = 0; i < count; ++i) {
      const zt_object *o = nullptr;
      zt_file_object_at(f, i, &o);
      std::vector<uint8_t> buf(1 << 16);
      size_t n = 0;
      zt_status rs = zt_component_read(o, 0, buf.data(), buf.size(), &n);
      zt_status vs = zt_object_verify(o);
      if (vs != ZT_OK) {
        ++damaged;
        EXPECT_EQ(vs, c.status) << zt_last_error();
        // Digest damage shows only on verify; other damage on read too.
        if (c.status != ZT_E_DIGEST_MISMATCH) {
          EXPECT_EQ(rs, c.status);
        }
      } else {
        EXPECT_EQ(rs, ZT_OK) << zt_last_error();
      }
    }
    EXPECT_EQ(damaged, 1u);
    EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), c.status);
    zt_close(f);
    // Strict open refuses structural damage at once; digest and frame
    // damage need the data and show on verify.
    zt_open_options strict;
    zt_open_options_init(&strict);
    strict.strict = 1;
    st = zt_open(path.c_str(), &strict, &f);
    if (c.status == ZT_E_DIGEST_MISMATCH || c.status == ZT_E_CORRUPT) {
      ASSERT_EQ(st, ZT_OK);
      EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), c.status);
      zt_close(f);
    } else {
      EXPECT_EQ(st, c.status) << zt_last_error();
    }
  }
}
