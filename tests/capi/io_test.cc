// zt_open_io: files read through caller callbacks. Every interop vector read
// that way gives the decoded bytes expected.json records (component reads,
// read_many, verify), with and without the vectored callback and with a
// callback that returns a few bytes at a time; a callback that fails at any
// call of a whole session, or misbehaves, ends in a clean status with
// context, and close runs exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_io.h"

using nlohmann::json;

namespace {

// What a callback does at the call numbered `fail_at` (counted over every
// read_at and read_at_v call of one session).
enum class Fault { None, Error, NoBytes, TooMany, PositiveStatus };

struct Mem {
  std::string bytes;
  size_t max_per_call = SIZE_MAX;  // short reads: at most this much per call
  Fault fault = Fault::None;
  long fail_at = -1;
  std::atomic<long> calls{0};
  std::atomic<int> closed{0};
  bool hit = false;            // the fault was injected
  bool vectored_only = false;  // count and fail read_at_v calls only

  // Returns true when this call is the one to fail; how is in `fault`.
  bool injected() {
    long n = calls.fetch_add(1);
    if (n != fail_at) return false;
    hit = true;
    return true;
  }
};

zt_status copy_range(Mem *m, uint64_t offset, size_t len, void *dst, size_t *out_len) {
  if (offset > m->bytes.size() || len > m->bytes.size() - offset) {
    zt_io_set_error("read past the end");
    return ZT_E_IO;
  }
  size_t n = std::min(len, m->max_per_call);
  std::memcpy(dst, m->bytes.data() + offset, n);
  *out_len = n;
  return ZT_OK;
}

zt_status mem_read_at(void *user, uint64_t offset, size_t len, void *dst, size_t *out_len) {
  auto *m = static_cast<Mem *>(user);
  if (!m->vectored_only && m->injected()) {
    switch (m->fault) {
      case Fault::Error:
        zt_io_set_error("injected failure");
        return ZT_E_IO;
      case Fault::NoBytes:
        *out_len = 0;
        return ZT_OK;
      case Fault::TooMany:
        *out_len = len + 1;
        return ZT_OK;
      case Fault::PositiveStatus:
        return static_cast<zt_status>(7);
      case Fault::None:
        break;
    }
  }
  return copy_range(m, offset, len, dst, out_len);
}

zt_status mem_read_at_v(void *user, zt_io_range *ranges, size_t n) {
  auto *m = static_cast<Mem *>(user);
  if (m->injected()) {
    if (m->fault == Fault::Error) {
      zt_io_set_error("injected failure");
      return ZT_E_IO;
    }
    if (m->fault == Fault::TooMany) {
      ranges[0].out_len = ranges[0].len + 1;
      return ZT_OK;
    }
    return ZT_OK;  // NoBytes: every range left short, completed by read_at
  }
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && ranges[i].offset < ranges[i - 1].offset + ranges[i - 1].len) {
      zt_io_set_error("ranges overlap or are not sorted");
      return ZT_E_INTERNAL;
    }
    size_t got = 0;
    zt_status st = copy_range(m, ranges[i].offset, ranges[i].len, ranges[i].dst, &got);
    if (st != ZT_OK) return st;
    ranges[i].out_len = got;
  }
  return ZT_OK;
}

void mem_close(void *user) {
  static_cast<Mem *>(user)->closed.fetch_add(1);
}

zt_io make_io(Mem &m, bool vectored, const char *name = "test://mem") {
  zt_io io;
  zt_io_init(&io);
  io.user = &m;
  io.size = m.bytes.size();
  io.read_at = mem_read_at;
  io.read_at_v = vectored ? mem_read_at_v : nullptr;
  io.close = mem_close;
  io.name = name;
  return io;
}

struct Decoded {
  std::string object, role, sha;
};

// Reads every component of an open file three ways (component read,
// read_many, verify); returns the first failure, else ZT_OK and the hashes.
zt_status read_everything(zt_file *f, std::vector<Decoded> &out) {
  size_t count = 0;
  zt_status st = zt_file_object_count(f, &count);
  if (st != ZT_OK) return st;
  std::vector<zt_read_request> reqs;
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<size_t> sizes;  // element size of each request
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    if ((st = zt_file_object_at(f, i, &o)) != ZT_OK) return st;
    zt_object_info info{};
    info.struct_size = sizeof info;
    if ((st = zt_object_get_info(o, &info)) != ZT_OK) return st;
    for (size_t c = 0; c < info.component_count; ++c) {
      zt_component_info ci{};
      ci.struct_size = sizeof ci;
      if ((st = zt_object_component(o, c, &ci)) != ZT_OK) return st;
      std::vector<uint8_t> buf(ci.decoded_length + 1);
      size_t n = 0;
      if ((st = zt_component_read(o, c, buf.data(), buf.size(), &n)) != ZT_OK) return st;
      // expected.json hashes the stored (little-endian) bytes; reads hand
      // over host order.
      const size_t esize = zt_dtype_size(ci.dtype);
      out.push_back({std::string(info.name, info.name_len), ci.role, zttest::sha256_le_hex(buf.data(), n, esize)});
      const void *view = nullptr;
      size_t vlen = 0;
      if (zt_component_view(o, c, &view, &vlen) != ZT_E_NOT_ZERO_COPY) return ZT_E_INTERNAL;
      bufs.emplace_back(ci.decoded_length + 1);
      reqs.push_back({o, c, bufs.back().data(), bufs.back().size(), 0, ZT_OK});
      names.emplace_back(std::string(info.name, info.name_len), ci.role);
      sizes.push_back(esize);
    }
  }
  if ((st = zt_file_read_many(f, reqs.data(), reqs.size())) != ZT_OK) return st;
  for (size_t k = 0; k < reqs.size(); ++k)
    out.push_back({names[k].first, names[k].second + "@read_many",
                   zttest::sha256_le_hex(bufs[k].data(), reqs[k].out_size, sizes[k])});
  return zt_file_verify(f, 0, nullptr, nullptr);
}

std::vector<Decoded> expected_of(const json &file) {
  std::vector<Decoded> v;
  for (const auto &o : file["objects"])
    for (const auto &c : o["components"]) v.push_back({o["name"], c["role"], c["sha256"]});
  return v;
}

void check_dir(const std::string &sub, bool vectored, size_t max_per_call) {
  const std::string dir = zttest::interop_dir() + "/" + sub;
  json exp = json::parse(zttest::read_required_file(dir + "/expected.json"));
  for (auto it = exp["files"].begin(); it != exp["files"].end(); ++it) {
    SCOPED_TRACE(sub + "/" + it.key());
    Mem m;
    m.bytes = zttest::read_file(dir + "/" + it.key());
    m.max_per_call = max_per_call;
    zt_io io = make_io(m, vectored);
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open_io(&io, nullptr, &f), ZT_OK) << zt_last_error();
    std::vector<Decoded> got;
    ASSERT_EQ(read_everything(f, got), ZT_OK) << zt_last_error();
    auto want = expected_of(it.value());
    ASSERT_EQ(got.size(), 2 * want.size());
    std::map<std::pair<std::string, std::string>, std::string> by_key;
    for (const auto &d : got) by_key[{d.object, d.role}] = d.sha;
    for (const auto &w : want) {
      EXPECT_EQ(by_key[std::make_pair(w.object, w.role)], w.sha) << w.object << "/" << w.role;
      EXPECT_EQ(by_key[std::make_pair(w.object, w.role + "@read_many")], w.sha)
          << w.object << "/" << w.role << " (read_many)";
    }
    EXPECT_EQ(m.closed.load(), 0);
    EXPECT_EQ(zt_close(f), ZT_OK);
    EXPECT_EQ(m.closed.load(), 1);
  }
}

TEST(OpenIo, InteropVectorsMatchExpected) {
  for (const char *sub : {"v1", "v0"}) {
    check_dir(sub, false, SIZE_MAX);
    check_dir(sub, true, SIZE_MAX);
  }
}

TEST(OpenIo, ShortReadsAreResumed) {
  check_dir("v0", false, 7);
  check_dir("v0", true, 7);
  check_dir("v1", true, 4093);
}

// One session over a file with zstd, digests and many small blobs; a fault
// at every call index in turn. Each run ends in a clean status naming the
// source, or (the fault fell after the last call) in success; close runs once.
void inject_everywhere(const std::string &file, Fault fault, bool vectored, zt_status want,
                       bool vectored_only = false) {
  const std::string bytes = zttest::read_file(zttest::interop_dir() + "/v1/" + file);
  const json exp = json::parse(zttest::read_required_file(zttest::interop_dir() + "/v1/expected.json"));
  const std::vector<Decoded> expected = expected_of(exp["files"][file]);
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.threads = 1;  // a deterministic call order
  long k = 0;
  for (;; ++k) {
    SCOPED_TRACE(file + " fault at call " + std::to_string(k));
    Mem m;
    m.bytes = bytes;
    m.fault = fault;
    m.fail_at = k;
    m.vectored_only = vectored_only;
    zt_io io = make_io(m, vectored, "test://fault");
    zt_file *f = nullptr;
    zt_status st = zt_open_io(&io, &opts, &f);
    std::vector<Decoded> got;
    if (st == ZT_OK) {
      st = read_everything(f, got);
      EXPECT_EQ(zt_close(f), ZT_OK);
    } else {
      EXPECT_EQ(f, nullptr);
    }
    EXPECT_EQ(m.closed.load(), 1);
    if (!m.hit) {
      EXPECT_EQ(st, ZT_OK) << zt_last_error();
      break;
    }
    EXPECT_EQ(st, want) << zt_last_error();
    if (want == ZT_OK) {  // the fault was absorbed: the bytes must still be right
      std::map<std::pair<std::string, std::string>, std::string> by_key;
      for (const auto &d : got) by_key[{d.object, d.role}] = d.sha;
      for (const auto &w : expected) {
        EXPECT_EQ((by_key[{w.object, w.role}]), w.sha) << w.object;
        EXPECT_EQ((by_key[{w.object, w.role + "@read_many"}]), w.sha) << w.object << " (read_many)";
      }
      continue;
    }
    EXPECT_NE(std::string(zt_last_error()).find("test://fault"), std::string::npos) << zt_last_error();
    if (fault == Fault::Error)
      EXPECT_NE(std::string(zt_last_error()).find("injected failure"), std::string::npos) << zt_last_error();
  }
  EXPECT_GT(k, vectored_only ? 0 : 5) << "the session made too few calls to exercise anything";
}

TEST(OpenIo, CallbackErrorAtEveryCallIsReported) {
  for (const char *file : {"checksum_sha256.zt", "zstd_levels.zt", "sparse_csr.zt"}) {
    inject_everywhere(file, Fault::Error, false, ZT_E_IO);
    inject_everywhere(file, Fault::Error, true, ZT_E_IO);
  }
}

TEST(OpenIo, MisbehavingCallbacksAreReported) {
  inject_everywhere("checksum_crc32c.zt", Fault::NoBytes, false, ZT_E_IO);
  inject_everywhere("checksum_crc32c.zt", Fault::TooMany, false, ZT_E_IO);
  inject_everywhere("checksum_crc32c.zt", Fault::TooMany, true, ZT_E_IO);
  inject_everywhere("checksum_crc32c.zt", Fault::PositiveStatus, false, ZT_E_IO);
}

// A vectored callback that leaves ranges short has them completed.
TEST(OpenIo, ShortVectoredRangesAreCompleted) {
  inject_everywhere("many_tensors.zt", Fault::NoBytes, true, ZT_OK, true);
}

// A source whose declared size is larger than what it can deliver.
TEST(OpenIo, SourceShorterThanDeclared) {
  Mem m;
  m.bytes = zttest::read_file(zttest::interop_dir() + "/v1/dense_f32.zt");
  zt_io io = make_io(m, false);
  io.size = m.bytes.size() + 100;
  zt_file *f = nullptr;
  EXPECT_NE(zt_open_io(&io, nullptr, &f), ZT_OK);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(m.closed.load(), 1);
}

TEST(OpenIo, ArgumentsAreChecked) {
  zt_file *f = reinterpret_cast<zt_file *>(1);
  EXPECT_EQ(zt_open_io(nullptr, nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_EQ(f, nullptr);

  Mem m;
  m.bytes = zttest::read_file(zttest::interop_dir() + "/v1/dense_f32.zt");
  zt_io io = make_io(m, false);
  io.read_at = nullptr;
  EXPECT_EQ(zt_open_io(&io, nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_EQ(m.closed.load(), 1) << "the user pointer is closed on every failure";

  io = make_io(m, false);
  EXPECT_EQ(zt_open_io(&io, nullptr, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(m.closed.load(), 2);

  io = make_io(m, false);
  io.struct_size = 8;
  EXPECT_EQ(zt_open_io(&io, nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("struct_size"), std::string::npos);
  EXPECT_EQ(m.closed.load(), 2) << "too small to hold close: not called";

  // A struct_size that stops before the optional name member is honoured.
  io = make_io(m, false);
  io.struct_size = offsetof(zt_io, name);
  io.name = "ignored";
  ASSERT_EQ(zt_open_io(&io, nullptr, &f), ZT_OK) << zt_last_error();
  zt_close(f);
  EXPECT_EQ(m.closed.load(), 3);

  // zt_io_set_error outside a callback has no effect on later messages.
  zt_io_set_error("stray text");
  io = make_io(m, false);
  io.size = 4;
  EXPECT_EQ(zt_open_io(&io, nullptr, &f), ZT_E_TRUNCATED);
  EXPECT_EQ(std::string(zt_last_error()).find("stray"), std::string::npos) << zt_last_error();
}

}  // namespace

namespace {

bool built_with_curl() {
  zt_file *f = nullptr;
  zt_status st = zt_open_url("http://127.0.0.1:1/", nullptr, nullptr, &f);
  return !(st == ZT_E_UNSUPPORTED && std::string(zt_last_error()).find("without libcurl") != std::string::npos);
}

}  // namespace

TEST(OpenUrl, ArgumentsAreChecked) {
  zt_file *f = reinterpret_cast<zt_file *>(1);
  EXPECT_EQ(zt_open_url(nullptr, nullptr, nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(zt_open_url("http://127.0.0.1/x.zt", nullptr, nullptr, nullptr), ZT_E_INVALID_ARG);
  zt_url_options u{};
  EXPECT_EQ(zt_open_url("http://127.0.0.1/x.zt", &u, nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("struct_size"), std::string::npos);
  if (!built_with_curl()) GTEST_SKIP() << "built without libcurl";
  // Only http(s) unless allowed, and the refusal names the scheme's URL
  // without its credentials.
  EXPECT_EQ(zt_open_url("ftp://bob:pw-ftp@127.0.0.1/x.zt", nullptr, nullptr, &f), ZT_E_UNSUPPORTED);
  EXPECT_EQ(std::string(zt_last_error()).find("pw-ftp"), std::string::npos) << zt_last_error();
  EXPECT_NE(std::string(zt_last_error()).find("<credentials>@127.0.0.1"), std::string::npos) << zt_last_error();
  EXPECT_EQ(f, nullptr);
}

// allow_any_scheme lets libcurl read file:// (sized by a probe, then ranges):
// the same bytes as a local open, through an older caller's shorter struct.
TEST(OpenUrl, OtherSchemesWhenAllowed) {
  if (!built_with_curl()) GTEST_SKIP() << "built without libcurl";
  const std::string dir = zttest::interop_dir() + "/v1";
  json exp = json::parse(zttest::read_required_file(dir + "/expected.json"));
  for (const char *name : {"checksum_sha256.zt", "large.zt", "many_tensors.zt"}) {
    SCOPED_TRACE(name);
    zt_url_options u;
    zt_url_options_init(&u);
    u.allow_any_scheme = 1;
    u.struct_size = offsetof(zt_url_options, cache_bytes);  // fields after it: defaults
    u.tail_bytes = 1;                                       // beyond struct_size: ignored
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open_url(("file://" + dir + "/" + name).c_str(), &u, nullptr, &f), ZT_OK) << zt_last_error();
    std::vector<Decoded> got;
    ASSERT_EQ(read_everything(f, got), ZT_OK) << zt_last_error();
    std::map<std::pair<std::string, std::string>, std::string> by_key;
    for (const auto &d : got) by_key[{d.object, d.role}] = d.sha;
    for (const auto &w : expected_of(exp["files"][name])) EXPECT_EQ((by_key[{w.object, w.role}]), w.sha);
    zt_io_stats st{};
    st.struct_size = sizeof st;
    ASSERT_EQ(zt_file_io_stats(f, &st), ZT_OK);
    EXPECT_GE(st.requests, 2u);  // the size probe and the tail at least
    EXPECT_GT(st.bytes, 0u);
    zt_close(f);
  }
  // A local file has no counters.
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open((dir + "/dense_f32.zt").c_str(), nullptr, &f), ZT_OK);
  zt_io_stats st{};
  st.struct_size = sizeof st;
  st.requests = 99;
  ASSERT_EQ(zt_file_io_stats(f, &st), ZT_OK);
  EXPECT_EQ(st.requests, 0u);
  zt_close(f);
}

namespace {

// zt_redact_url: the rule bindings use for their reprs and messages.
std::string redacted(const std::string &in) {
  size_t need = 0;
  EXPECT_EQ(zt_redact_url(in.data(), in.size(), nullptr, 0, &need), ZT_E_BUFFER_TOO_SMALL);
  std::string out(need + 1, '\x7f');
  size_t len = 0;
  EXPECT_EQ(zt_redact_url(in.data(), in.size(), &out[0], out.size(), &len), ZT_OK) << zt_last_error();
  EXPECT_EQ(len, need);
  EXPECT_EQ(out[len], '\0');
  out.resize(len);
  return out;
}

}  // namespace

TEST(RedactUrl, CredentialsQueriesAndFragmentsGo) {
  EXPECT_EQ(redacted("https://user:secret@host:8080/m.zt?X-Amz-Signature=abc#frag"),
            "https://<credentials>@host:8080/m.zt?<redacted>");
  EXPECT_EQ(redacted("http://host/a.zt#x"), "http://host/a.zt");
  // s3: only the part before the bucket; the key is literal.
  EXPECT_EQ(redacted("s3://AKIA:secret@bucket/key?with#marks"), "s3://<credentials>@bucket/key?with#marks");
  EXPECT_EQ(redacted("/local/path?not-a-query"), "/local/path?not-a-query");
  EXPECT_EQ(redacted(""), "");
  // Lengths, not C strings: a NUL inside is kept, nothing past len is read.
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(redacted(with_nul), with_nul);
  char small[4];
  size_t len = 0;
  EXPECT_EQ(zt_redact_url("https://u:p@h/", 14, small, sizeof small, &len), ZT_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, std::strlen("https://<credentials>@h/"));
  EXPECT_EQ(zt_redact_url(nullptr, 3, small, sizeof small, &len), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_redact_url("x", 1, nullptr, 8, &len), ZT_E_INVALID_ARG);
}
