// prefetch_local_headers (src/foreign/zip_layout.cc): opening a cold .npz or
// .pt touches one page per member (its local header, the .npy header or the
// storage after it), which would otherwise arrive one page fault, one disk
// round trip, at a time. The hint must make the kernel read every member's
// header page without anything touching it. The file is evicted with
// fdatasync + posix_fadvise(DONTNEED); where that does not evict (tmpfs),
// the test is skipped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "foreign/zip_layout.h"
#include "test_util.h"

using zttest::TempDir;

namespace {

void put(std::string &s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>(v >> (8 * i));
}

// A zip of `count` stored members of `each` bytes; their local header offsets in `locals`.
std::string stored_zip(size_t count, size_t each, std::vector<uint64_t> &locals) {
  std::string z, cd;
  for (size_t i = 0; i < count; ++i) {
    const std::string name = "m" + std::to_string(i) + ".npy";
    locals.push_back(z.size());
    put(z, 0x04034b50, 4);
    put(z, 20, 2), put(z, 0, 2), put(z, 0, 2), put(z, 0, 4);  // version, flags, stored, time
    put(z, 0, 4), put(z, each, 4), put(z, each, 4);           // crc (unchecked here), sizes
    put(z, name.size(), 2), put(z, 0, 2);
    z += name;
    z.append(each, static_cast<char>('a' + i % 26));
    put(cd, 0x02014b50, 4);
    put(cd, 20, 2), put(cd, 20, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 4);
    put(cd, 0, 4), put(cd, each, 4), put(cd, each, 4);
    put(cd, name.size(), 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 4);
    put(cd, locals.back(), 4);
    cd += name;
  }
  const uint64_t cd_off = z.size();
  z += cd;
  put(z, 0x06054b50, 4);
  put(z, 0, 2), put(z, 0, 2), put(z, count, 2), put(z, count, 2);
  put(z, cd.size(), 4), put(z, cd_off, 4), put(z, 0, 2);
  return z;
}

bool resident(const uint8_t *base, uint64_t offset) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  unsigned char v = 0;
  if (::mincore(const_cast<uint8_t *>(base) + offset / page * page, page, &v) != 0) return false;
  return v & 1;
}

TEST(ZipPrefetch, HintsReadEveryMembersHeaderPage) {
  TempDir d;
  std::vector<uint64_t> locals;
  const size_t each = 256 << 10;  // members far apart: readahead around one does not reach the next
  const std::string bytes = stored_zip(24, each, locals);
  const std::string path = d.file("m.npz");
  zttest::write_file(path, bytes);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::fdatasync(fd);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  void *m = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(m, MAP_FAILED);
  const auto *p = static_cast<const uint8_t *>(m);
  size_t cold = 0;
  for (uint64_t l : locals) cold += !resident(p, l);
  if (cold < locals.size()) {
    ::munmap(m, bytes.size());
    GTEST_SKIP() << "the page cache kept the file (tmpfs?): " << locals.size() - cold << " header pages resident";
  }
  zt::foreign::prefetch_local_headers(p, bytes.size());
  // The reads were queued, not waited for: give them time (a loaded machine).
  size_t missing = locals.size();
  for (int i = 0; i < 500 && missing; ++i) {
    missing = 0;
    for (uint64_t l : locals) missing += !resident(p, l);
    if (missing) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(missing, 0u) << "header pages not read after the hint";
  ::munmap(m, bytes.size());
}

TEST(ZipPrefetch, HostileDirectoriesAreHarmless) {
  std::vector<uint64_t> locals;
  std::string z = stored_zip(3, 10, locals);
  // Local header offsets past the end, a truncated directory, no directory.
  std::string bad = z;
  const size_t cd = bad.size() - 22 - 3 * (46 + 6);
  bad[cd + 42] = bad[cd + 43] = bad[cd + 44] = bad[cd + 45] = '\xff';
  zt::foreign::prefetch_local_headers(reinterpret_cast<const uint8_t *>(bad.data()), bad.size());
  zt::foreign::prefetch_local_headers(reinterpret_cast<const uint8_t *>(z.data()), z.size() - 30);
  zt::foreign::prefetch_local_headers(reinterpret_cast<const uint8_t *>(z.data()), 10);
  zt::foreign::prefetch_local_headers(nullptr, 0);
  EXPECT_EQ(zt::foreign::zip_data_ranges(reinterpret_cast<const uint8_t *>(z.data()), z.size()).size(), 3u);
}

}  // namespace
