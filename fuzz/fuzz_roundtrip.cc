// Fuzz target (property): the input is a little program describing objects
// — name, dtype, shape, encoding, digest, whole or streamed — written with
// the C ABI to a temporary file, then read back. The file must open
// strictly, verify, and give back exactly what was written.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ztensor.h"

namespace {

// Consumes the fuzzer's bytes; zeros once they run out.
struct Input {
  const uint8_t *p;
  size_t n;
  uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
};

struct Written {
  std::string name;
  zt_dtype dtype;
  std::vector<uint64_t> shape;
  std::string bytes;
};

const std::string &temp_path() {
  static const std::string path = [] {
    char tmpl[] = "/tmp/zt-fuzz-roundtrip-XXXXXX";
    const char *dir = mkdtemp(tmpl);
    if (!dir) std::abort();
    return std::string(dir) + "/f.zt";
  }();
  return path;
}

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "round trip broke: %s (%s)\n", what, zt_last_error());
  std::abort();
}

void check(zt_status st, const char *what) {
  if (st != ZT_OK) fail(what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in{data, size};
  const std::string &path = temp_path();
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.threads = 1;
  zt_writer *w = nullptr;
  check(zt_writer_create(path.c_str(), &wo, &w), "create");
  std::vector<Written> objs;
  const int count = in.byte() % 6;
  for (int k = 0; k < count; ++k) {
    Written o;
    // Unique names, some with multi-byte UTF-8 and an empty one.
    const uint8_t nb = in.byte();
    o.name = (nb % 5 == 0) ? std::string() : std::string(nb % 3 == 0 ? "\xc3\xa9" : "t") + std::to_string(nb % 7);
    bool dup = false;
    for (const auto &e : objs) dup |= e.name == o.name;
    if (dup) o.name += "#" + std::to_string(k);
    o.dtype = static_cast<zt_dtype>(1 + in.byte() % 13);
    const size_t ndim = in.byte() % 4;
    uint64_t numel = 1;
    for (size_t d = 0; d < ndim; ++d) {
      o.shape.push_back(in.byte() % 9);
      numel *= o.shape.back();
    }
    const size_t es = zt_dtype_size(o.dtype);
    o.bytes.resize(numel * es);
    for (auto &b : o.bytes) b = static_cast<char>(in.byte());
    if (o.dtype == ZT_BOOL)
      for (auto &b : o.bytes) b &= 1;  // strict verify wants 0/1
    const uint8_t how = in.byte();
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = (how & 1) ? ZT_ENCODING_ZSTD : ZT_ENCODING_RAW;
    bo.zstd_level = 1 + (how >> 5);
    bo.digest = (how >> 1) % 3 == 0 ? ZT_DIGEST_NONE : (how >> 1) % 3 == 1 ? ZT_DIGEST_CRC32C : ZT_DIGEST_SHA256;
    if (how & 8) {
      // Streamed in pieces of a fuzzed size.
      check(zt_writer_begin_object(w, o.name.data(), o.name.size(), "dense", o.shape.data(), o.shape.size()),
            "begin_object");
      check(zt_write_blob_begin(w, o.name.data(), o.name.size(), "data", o.dtype, &bo), "blob_begin");
      const size_t piece = 1 + in.byte() % 17;
      for (size_t off = 0; off < o.bytes.size(); off += piece) {
        const size_t len = std::min(piece, o.bytes.size() - off);
        check(zt_write_blob_append(w, o.bytes.data() + off, len), "blob_append");
      }
      check(zt_write_blob_end(w), "blob_end");
    } else {
      check(zt_writer_add_dense(w, o.name.data(), o.name.size(), o.dtype, o.shape.data(), o.shape.size(),
                                o.bytes.data(), o.bytes.size(), &bo),
            "add_dense");
    }
    objs.push_back(std::move(o));
  }
  check(zt_writer_finish(w), "finish");

  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.strict = 1;
  opts.threads = 1;
  opts.access = (size & 1) ? ZT_ACCESS_PREAD : ZT_ACCESS_MMAP;
  zt_file *f = nullptr;
  check(zt_open(path.c_str(), &opts, &f), "open");
  check(zt_file_verify(f, 1, nullptr, nullptr), "verify");
  size_t n = 0;
  check(zt_file_object_count(f, &n), "count");
  if (n != objs.size()) fail("object count");
  for (const auto &o : objs) {
    const zt_object *obj = nullptr;
    check(zt_file_object_by_name(f, o.name.data(), o.name.size(), &obj), "by_name");
    zt_object_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    check(zt_object_get_info(obj, &info), "info");
    if (info.ndim != o.shape.size() || (info.ndim && std::memcmp(info.shape, o.shape.data(), info.ndim * 8) != 0))
      fail("shape");
    zt_component_info ci;
    std::memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    check(zt_object_component(obj, 0, &ci), "component");
    if (ci.dtype != o.dtype || ci.decoded_length != o.bytes.size()) fail("dtype or length");
    std::string back(o.bytes.size(), '\0');
    size_t got = 0;
    check(zt_component_read(obj, 0, back.empty() ? nullptr : &back[0], back.size(), &got), "read");
    if (got != o.bytes.size() || back != o.bytes) fail("data differs");
  }
  zt_close(f);
  return 0;
}
