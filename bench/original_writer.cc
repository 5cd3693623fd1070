#include "original_writer.h"

#include <zstd.h>

#include <map>

namespace bench {
namespace {

void write_all(int fd, const void *p, size_t n, const std::string &path) {
  const auto *c = static_cast<const uint8_t *>(p);
  while (n > 0) {
    ssize_t r = ::write(fd, c, n);
    if (r <= 0) die("write failed on " + path);
    c += r;
    n -= static_cast<size_t>(r);
  }
}

struct Cbor {
  std::string s;
  void head(uint8_t major, uint64_t v) {
    const uint8_t m = static_cast<uint8_t>(major << 5);
    if (v < 24) {
      s.push_back(static_cast<char>(m | v));
      return;
    }
    int n = v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFFFFFF ? 4 : 8;
    s.push_back(static_cast<char>(m | (n == 1 ? 24 : n == 2 ? 25 : n == 4 ? 26 : 27)));
    for (int i = n - 1; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
  }
  void text(const std::string &t) {
    head(3, t.size());
    s += t;
  }
};

// The original keeps its manifest as serde structs while it writes: a
// BTreeMap of objects by name, each with its shape, format and a BTreeMap
// of components whose dtype and encoding are Strings. The same here.
struct Comp {
  std::string dtype, encoding;
  uint64_t offset = 0, length = 0, uncompressed_length = 0;
};
struct Obj {
  std::vector<uint64_t> shape;
  std::string format;
  std::map<std::string, Comp> components;
};
using Objects = std::map<std::string, Obj>;

std::string manifest(const Objects &objects) {
  Cbor c;
  c.head(5, 2);
  c.text("version");
  c.text("1.2.0");
  c.text("objects");
  c.head(5, objects.size());
  for (const auto &[name, o] : objects) {
    c.text(name);
    c.head(5, 3);
    c.text("shape");
    c.head(4, o.shape.size());
    for (uint64_t d : o.shape) c.head(0, d);
    c.text("format");
    c.text(o.format);
    c.text("components");
    c.head(5, o.components.size());
    for (const auto &[role, k] : o.components) {
      const bool zstd = k.encoding == "zstd";
      c.text(role);
      c.head(5, zstd ? 5 : 4);
      c.text("dtype");
      c.text(k.dtype);
      c.text("offset");
      c.head(0, k.offset);
      c.text("length");
      c.head(0, k.length);
      c.text("encoding");
      c.text(k.encoding);
      if (zstd) {
        c.text("uncompressed_length");
        c.head(0, k.uncompressed_length);
      }
    }
  }
  return std::move(c.s);
}

// blob(i) returns tensor i's stored bytes.
template <typename Blob>
void write_file(const Workload &w, const std::string &path, bool sync, bool zstd, Blob blob) {
  static const uint8_t zeros[64] = {};
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) die("cannot create " + path);
  write_all(fd, "ZTEN1000", 8, path);
  uint64_t pos = 8;
  Objects objects;
  for (size_t i = 0; i < w.tensors.size(); ++i) {
    const TensorSpec &t = w.tensors[i];
    uint64_t aligned = (pos + 63) / 64 * 64;
    if (aligned > pos) write_all(fd, zeros, aligned - pos, path);
    std::pair<const void *, size_t> b = blob(i);
    write_all(fd, b.first, b.second, path);
    Obj &o = objects[t.name];
    o.shape = t.shape;
    o.format = "dense";
    o.components["data"] = Comp{"f32", zstd ? "zstd" : "raw", aligned, b.second, t.bytes};
    pos = aligned + b.second;
  }
  std::string m = manifest(objects);
  write_all(fd, m.data(), m.size(), path);
  uint8_t tail[16];
  for (int i = 0; i < 8; ++i) tail[i] = static_cast<uint8_t>(uint64_t(m.size()) >> (8 * i));
  std::memcpy(tail + 8, "ZTEN1000", 8);
  write_all(fd, tail, 16, path);
  if (sync && ::fsync(fd) != 0) die("fsync failed on " + path);
  ::close(fd);
}

}  // namespace

void write_original(const Workload &w, const std::string &path, bool sync) {
  write_file(w, path, sync, false, [&](size_t i) -> std::pair<const void *, size_t> {
    return {w.arena.data() + w.tensors[i].offset, w.tensors[i].bytes};
  });
}

void write_original_zstd(const Workload &w, const std::string &path, int level) {
  std::vector<uint8_t> out;
  write_file(w, path, false, true, [&](size_t i) -> std::pair<const void *, size_t> {
    const TensorSpec &t = w.tensors[i];
    out.resize(ZSTD_compressBound(t.bytes));
    size_t r = ZSTD_compress(out.data(), out.size(), w.arena.data() + t.offset, t.bytes, level);
    if (ZSTD_isError(r)) die("ZSTD_compress failed");
    return {out.data(), r};
  });
}

}  // namespace bench
