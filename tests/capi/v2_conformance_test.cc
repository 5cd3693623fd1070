// The original implementation's conformance corpus for format v2
// (tests/data/v2-conformance, MIT), run through the public C ABI with the
// expectation of each case as conformance/src/lib.rs states it: the
// operation (open; open then view, verify or read a zt.sparse_csr/1 object)
// and the outcome (valid, data shard, unsupported, or rejected under a
// named rule, which the error message must name).
#include <dirent.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "ztensor.h"
#include "ztensor_composite.h"
#include "ztensor_io.h"

namespace {

enum class Op { Open, View, Verify, ReadCsr };
enum class Expect { Valid, DataShard, Unsupported, Reject };

struct Case {
  const char *name;
  Op op;
  Expect expect;
  const char *rule;  // Reject only
  const char *object = nullptr;
};

const Case kCases[] = {
    // valid
    {"canonical-basic", Op::Open, Expect::Valid, nullptr},
    {"minimal", Op::Open, Expect::Valid, nullptr},
    {"empty-objects", Op::Open, Expect::Valid, nullptr},
    {"scalar", Op::Open, Expect::Valid, nullptr},
    {"zero-size-tensor", Op::Open, Expect::Valid, nullptr},
    {"aliased-identical-blobs", Op::Open, Expect::Valid, nullptr},
    {"unknown-layout-structural", Op::Open, Expect::Valid, nullptr},
    {"unknown-ltype-structural", Op::Open, Expect::Valid, nullptr},
    {"f4-packed-odd-count", Op::Open, Expect::Valid, nullptr},
    {"shards-table", Op::Open, Expect::Valid, nullptr},
    {"nonzero-reserved-ignored", Op::Open, Expect::Valid, nullptr},
    {"attributes-kitchen-sink", Op::Open, Expect::Valid, nullptr},
    {"data-shard", Op::Open, Expect::DataShard, nullptr},
    {"verify-ok", Op::Verify, Expect::Valid, nullptr, "t"},
    {"view-unknown-encoding-refused", Op::View, Expect::Unsupported, nullptr, "t"},
    {"shard-reference-is-a-valid-image", Op::Open, Expect::Valid, nullptr},
    {"local-and-foreign-parts-together", Op::Open, Expect::Valid, nullptr},
    {"csr-metadata-valid", Op::Open, Expect::Valid, nullptr},
    {"csr-data-valid", Op::ReadCsr, Expect::Valid, nullptr, "m"},
    // reject: container
    {"file-too-small", Op::Open, Expect::Reject, "FileTooSmall"},
    {"header-magic", Op::Open, Expect::Reject, "HeaderMagic"},
    {"footer-magic", Op::Open, Expect::Reject, "FooterMagic"},
    {"version-unsupported", Op::Open, Expect::Reject, "Version"},
    {"manifest-too-large", Op::Open, Expect::Reject, "ManifestTooLarge"},
    {"manifest-out-of-bounds", Op::Open, Expect::Reject, "ManifestBounds"},
    {"manifest-misaligned", Op::Open, Expect::Reject, "BlobAlignment"},
    {"manifest-hash-mismatch", Op::Open, Expect::Reject, "ManifestHash"},
    {"data-shard-nonzero-offset", Op::Open, Expect::Reject, "ManifestBounds"},
    // reject: CBOR
    {"cbor-trailing-bytes", Op::Open, Expect::Reject, "CborSyntax"},
    {"cbor-tag", Op::Open, Expect::Reject, "CborSyntax"},
    {"cbor-indefinite", Op::Open, Expect::Reject, "CborSyntax"},
    {"cbor-non-shortest", Op::Open, Expect::Reject, "CborDeterminism"},
    {"cbor-unsorted-keys", Op::Open, Expect::Reject, "CborDeterminism"},
    {"cbor-duplicate-key", Op::Open, Expect::Reject, "CborDuplicateKey"},
    {"cbor-depth", Op::Open, Expect::Reject, "CborDepth"},
    // reject: schema
    {"schema-missing-objects", Op::Open, Expect::Reject, "Schema"},
    {"schema-unknown-dtype", Op::Open, Expect::Reject, "Schema"},
    {"schema-blob-arity", Op::Open, Expect::Reject, "Schema"},
    {"schema-encoding-without-decoded-length", Op::Open, Expect::Reject, "Schema"},
    {"schema-ltype-dtype-mismatch", Op::Open, Expect::Reject, "Schema"},
    {"schema-digest-uppercase-hex", Op::Open, Expect::Reject, "Schema"},
    {"shard-table-key-not-text", Op::Open, Expect::Reject, "Schema"},
    {"shard-name-traversal", Op::Open, Expect::Reject, "ShardName"},
    {"shard-name-separator", Op::Open, Expect::Reject, "ShardName"},
    {"shard-name-empty", Op::Open, Expect::Reject, "ShardName"},
    {"shard-name-leading-dot", Op::Open, Expect::Reject, "ShardName"},
    {"shard-ref-not-in-table", Op::Open, Expect::Reject, "ShardRef"},
    {"blob-array-with-three-elements", Op::Open, Expect::Reject, "Schema"},
    // reject: attributes
    {"attributes-not-a-map", Op::Open, Expect::Reject, "Schema"},
    {"attribute-key-empty", Op::Open, Expect::Reject, "Name"},
    {"attribute-key-nul", Op::Open, Expect::Reject, "Name"},
    {"attribute-key-not-text", Op::Open, Expect::Reject, "Schema"},
    {"object-attributes-not-a-map", Op::Open, Expect::Reject, "Schema"},
    {"shard-blob-partial-overlap", Op::Open, Expect::Reject, "BlobOverlap"},
    // reject: data (Appendix A content rules, digests, CSR data)
    {"verify-digest-mismatch", Op::Verify, Expect::Reject, "Digest", "t"},
    {"bool-invalid-byte", Op::Verify, Expect::Reject, "LayoutData", "t"},
    {"f4-nonzero-odd-nibble", Op::Verify, Expect::Reject, "LayoutData", "t"},
    // reject: names, shapes, blobs
    {"name-empty", Op::Open, Expect::Reject, "Name"},
    {"name-nul", Op::Open, Expect::Reject, "Name"},
    {"name-too-long", Op::Open, Expect::Reject, "Name"},
    {"shape-rank-65", Op::Open, Expect::Reject, "Shape"},
    {"shape-product-overflow", Op::Open, Expect::Reject, "Shape"},
    {"blob-misaligned", Op::Open, Expect::Reject, "BlobAlignment"},
    {"blob-offset-zero", Op::Open, Expect::Reject, "BlobAlignment"},
    {"blob-out-of-bounds", Op::Open, Expect::Reject, "BlobBounds"},
    {"blob-partial-overlap", Op::Open, Expect::Reject, "BlobOverlap"},
    // zt.sparse_csr/1
    {"csr-indptr-not-zero-based", Op::ReadCsr, Expect::Reject, "LayoutData", "m"},
    {"csr-index-out-of-cols", Op::ReadCsr, Expect::Reject, "LayoutData", "m"},
    {"csr-row-not-increasing", Op::ReadCsr, Expect::Reject, "LayoutData", "m"},
    {"csr-missing-part", Op::Open, Expect::Reject, "LayoutRule"},
    {"csr-signed-indices", Op::Open, Expect::Reject, "LayoutRule"},
    {"csr-indptr-count", Op::Open, Expect::Reject, "LayoutRule"},
    {"csr-values-size", Op::Open, Expect::Reject, "LayoutRule"},
    // reject: layouts
    {"dense-extra-part", Op::Open, Expect::Reject, "LayoutRule"},
    {"dense-size-mismatch", Op::Open, Expect::Reject, "DenseSize"},
    {"dense-f4-size-mismatch", Op::Open, Expect::Reject, "DenseSize"},
};

std::string corpus_dir() {
  const char *root = std::getenv("ZT_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/data/v2-conformance";
}

std::string path_of(const Case &c) {
  return corpus_dir() + (c.expect == Expect::Reject ? "/reject/" : "/valid/") + c.name + ".zt";
}

std::vector<std::string> files_in(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 3 && n.compare(n.size() - 3, 3, ".zt") == 0) out.push_back(n.substr(0, n.size() - 3));
    }
    closedir(d);
  }
  return out;
}

// The operation after a clean open; its status and zt_last_error().
zt_status run_op(const Case &c, zt_file *f, std::string *msg) {
  if (c.op == Op::Open) return ZT_OK;
  const zt_object *o = nullptr;
  zt_status st = zt_file_object_by_name(f, c.object, std::strlen(c.object), &o);
  if (st != ZT_OK) {
    *msg = zt_last_error();
    return st;
  }
  switch (c.op) {
    case Op::View: {
      const void *p = nullptr;
      size_t n = 0;
      st = zt_component_view(o, 0, &p, &n);
      break;
    }
    case Op::Verify: {
      zt_verify_result r;
      st = zt_component_verify(o, 0, &r);
      if (st == ZT_OK && r != ZT_VERIFY_OK) {
        *msg = "verify did not check a digest";
        return ZT_E_INTERNAL;
      }
      break;
    }
    case Op::ReadCsr:
      st = zt_object_validate(o);
      break;
    case Op::Open:
      break;
  }
  if (st != ZT_OK) *msg = zt_last_error();
  return st;
}

TEST(V2Conformance, EveryCorpusFileHasAnExpectation) {
  std::set<std::string> known;
  for (const Case &c : kCases) known.insert(std::string(c.expect == Expect::Reject ? "reject/" : "valid/") + c.name);
  size_t seen = 0;
  for (const char *dir : {"valid", "reject"})
    for (const std::string &n : files_in(corpus_dir() + "/" + dir)) {
      EXPECT_TRUE(known.count(std::string(dir) + "/" + n)) << dir << "/" << n << " has no expectation here";
      ++seen;
    }
  EXPECT_EQ(seen, sizeof kCases / sizeof kCases[0]);
  EXPECT_EQ(seen, 76u);  // 19 valid + 57 reject at the vendored commit
}

TEST(V2Conformance, EveryCaseEndsAsTheCorpusSays) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string path = path_of(c);
    zt_file *f = nullptr;
    zt_status st = zt_open(path.c_str(), nullptr, &f);
    std::string msg = st == ZT_OK ? "" : zt_last_error();
    if (c.op == Op::Open && c.expect == Expect::Reject) {
      EXPECT_NE(st, ZT_OK);
      EXPECT_NE(msg.find(std::string("rejected (") + c.rule + ")"), std::string::npos) << msg;
      zt_close(f);
      continue;
    }
    ASSERT_EQ(st, ZT_OK) << "this case must open cleanly: " << msg;
    uint32_t shard = 2;
    ASSERT_EQ(zt_file_data_shard(f, &shard), ZT_OK);
    EXPECT_EQ(shard, c.expect == Expect::DataShard ? 1u : 0u);
    const char *version = nullptr;
    ASSERT_EQ(zt_file_version(f, &version), ZT_OK);
    EXPECT_STREQ(version, "2");
    st = run_op(c, f, &msg);
    switch (c.expect) {
      case Expect::Valid:
      case Expect::DataShard:
        EXPECT_EQ(st, ZT_OK) << msg;
        break;
      case Expect::Unsupported:
        EXPECT_EQ(st, ZT_E_UNSUPPORTED) << msg;
        break;
      case Expect::Reject:
        EXPECT_NE(st, ZT_OK);
        EXPECT_NE(msg.find(std::string("rejected (") + c.rule + ")"), std::string::npos) << msg;
        break;
    }
    zt_close(f);
  }
}

zt_status read_bytes_at(void *user, uint64_t offset, size_t len, void *dst, size_t *out_len) {
  const auto *b = static_cast<const std::vector<unsigned char> *>(user);
  std::memcpy(dst, b->data() + offset, len);
  *out_len = len;
  return ZT_OK;
}

// The same bytes through zt_open_memory and zt_open_io (caller callbacks):
// the generation is decided by the magic for every opening, and the rules
// are the same.
TEST(V2Conformance, MemoryAndCallbackOpeningsAgree) {
  for (const Case &c : kCases) {
    if (c.op != Op::Open) continue;
    SCOPED_TRACE(c.name);
    FILE *in = std::fopen(path_of(c).c_str(), "rb");
    ASSERT_NE(in, nullptr);
    std::vector<unsigned char> bytes;
    unsigned char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(in);
    for (int via_io = 0; via_io < 2; ++via_io) {
      zt_file *f = nullptr;
      zt_status st;
      if (via_io) {
        zt_io io;
        zt_io_init(&io);
        io.user = &bytes;
        io.size = bytes.size();
        io.read_at = read_bytes_at;
        st = zt_open_io(&io, nullptr, &f);
      } else {
        st = zt_open_memory(bytes.data(), bytes.size(), nullptr, &f);
      }
      if (c.expect == Expect::Reject) {
        EXPECT_NE(st, ZT_OK) << via_io;
        EXPECT_NE(std::string(zt_last_error()).find(std::string("rejected (") + c.rule + ")"), std::string::npos)
            << zt_last_error();
      } else {
        EXPECT_EQ(st, ZT_OK) << zt_last_error();
      }
      zt_close(f);
    }
  }
}

}  // namespace
