#include "original_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_util.h"

namespace bench {
namespace {

struct Entry {
  std::string name;
  uint64_t offset, length, decoded;
  bool zstd;
};

// The objects' data components, in name order (the original's BTreeMap).
std::vector<Entry> entries_by_name(const std::string &path) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.access = ZT_ACCESS_PREAD;
  zt_file *f = nullptr;
  check(zt_open(path.c_str(), &o, &f), "zt_open");
  size_t n = 0;
  check(zt_file_object_count(f, &n), "zt_file_object_count");
  std::vector<Entry> e(n);
  for (size_t i = 0; i < n; ++i) {
    const zt_object *obj = nullptr;
    check(zt_file_object_at(f, i, &obj), "zt_file_object_at");
    zt_object_info oi;
    std::memset(&oi, 0, sizeof oi);
    oi.struct_size = sizeof oi;
    check(zt_object_get_info(obj, &oi), "zt_object_get_info");
    zt_component_info ci;
    std::memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    check(zt_object_component(obj, 0, &ci), "zt_object_component");
    e[i] = {std::string(oi.name, oi.name_len), ci.offset, ci.length, ci.decoded_length,
            ci.encoding == ZT_ENCODING_ZSTD};
  }
  zt_close(f);
  std::sort(e.begin(), e.end(), [](const Entry &a, const Entry &b) { return a.name < b.name; });
  return e;
}

void read_exact_at(int fd, uint64_t offset, uint8_t *dst, size_t n) {
  if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) die("lseek failed");
  for (size_t done = 0; done < n;) {
    ssize_t r = ::read(fd, dst + done, n - done);
    if (r <= 0) die("read failed");
    done += static_cast<size_t>(r);
  }
}

}  // namespace

uint64_t read_original(const std::string &path) {
  std::vector<Entry> entries = entries_by_name(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open " + path);
  uint64_t sum = 0;
  std::vector<uint8_t *> kept;  // the loaded tensors stay alive, as a model's
  kept.reserve(entries.size());
  for (const Entry &e : entries) {
    // vec![0u8; n]: calloc, fresh zero pages the read then faults in.
    auto *out = static_cast<uint8_t *>(std::calloc(e.decoded ? e.decoded : 1, 1));
    if (!out) die("out of memory");
    if (!e.zstd) {
      read_exact_at(fd, e.offset, out, e.length);
    } else {
      std::vector<uint8_t> stored(e.length);
      read_exact_at(fd, e.offset, stored.data(), e.length);
      size_t got = ZSTD_decompress(out, e.decoded, stored.data(), stored.size());
      if (ZSTD_isError(got) || got != e.decoded) die("zstd decode failed");
    }
    if (e.decoded >= 8) sum += *reinterpret_cast<const uint64_t *>(out);
    kept.push_back(out);
  }
  ::close(fd);
  for (uint8_t *p : kept) std::free(p);
  return sum;
}

uint64_t view_original(const std::string &path) {
  std::vector<Entry> entries = entries_by_name(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open " + path);
  size_t size = static_cast<size_t>(::lseek(fd, 0, SEEK_END));
  void *map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) die("cannot map " + path);
  const auto *base = static_cast<const uint8_t *>(map);
  uint64_t sum = 0;
  for (const Entry &e : entries) sum += sum_bytes(base + e.offset, e.length);
  ::munmap(map, size);
  ::close(fd);
  return sum;
}

}  // namespace bench
