// What the `prefetch` open option may cost (issue 37): the thread reads the
// ranges the file's components cover, not every byte between the header
// and the manifest (a sparse file of gigabytes with one small tensor must
// not fill the page cache with its holes), and its second descriptor lives
// only as long as the thread, within the descriptor budget of mapped files
// (docs/limits.md).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "container/source.h"
#include "test_util.h"
#include "ztensor.h"

using zttest::TempDir;

namespace {

constexpr uint64_t kHole = uint64_t{1} << 30;

std::string slurp(const std::string &path) {
  FILE *fp = std::fopen(path.c_str(), "rb");
  std::string s;
  if (!fp) return s;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, fp)) > 0) s.append(buf, n);
  std::fclose(fp);
  return s;
}

// A file of `tensors` small raw tensors, then a hole of kHole bytes (no
// disk blocks, read as zeros), then the manifest and footer: 1 GiB long,
// a few KiB on disk. The bytes between the last blob and the manifest
// belong to no component.
// A plain file of `tensors` 64-byte tensors.
std::string write_dense(const TempDir &dir, const std::string &name, int tensors = 1) {
  const std::string dense = dir.file(name);
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(dense.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  for (int i = 0; i < tensors; ++i) {
    std::vector<uint8_t> v(64, static_cast<uint8_t>(i + 1));
    const uint64_t shape[1] = {v.size()};
    const std::string n = "t" + std::to_string(i);
    EXPECT_EQ(zt_writer_add_dense(w, n.data(), n.size(), ZT_U8, shape, 1, v.data(), v.size(), nullptr), ZT_OK);
  }
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return dense;
}

// The same tensors with a hole before the manifest.
std::string write_sparse(const TempDir &dir, const std::string &name, int tensors = 1) {
  const std::string dense = write_dense(dir, name + ".dense", tensors);
  const std::string bytes = slurp(dense);
  EXPECT_GT(bytes.size(), 16u);
  uint64_t manifest_size = 0;  // the footer's little-endian u64
  for (int i = 7; i >= 0; --i)
    manifest_size = manifest_size << 8 | static_cast<uint8_t>(bytes[bytes.size() - 16 + static_cast<size_t>(i)]);
  const size_t manifest_at = bytes.size() - 16 - static_cast<size_t>(manifest_size);
  const std::string path = dir.file(name);
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::pwrite(fd, bytes.data(), manifest_at, 0), static_cast<ssize_t>(manifest_at));
  const size_t tail = bytes.size() - manifest_at;
  EXPECT_EQ(::pwrite(fd, bytes.data() + manifest_at, tail, static_cast<off_t>(manifest_at + kHole)),
            static_cast<ssize_t>(tail));
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  ::unlink(dense.c_str());
  return path;
}

// Bytes of the file in the page cache.
uint64_t resident_bytes(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const off_t size = ::lseek(fd, 0, SEEK_END);
  void *map = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return 0;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((static_cast<uint64_t>(size) + page - 1) / page);
  uint64_t n = 0;
  if (::mincore(map, static_cast<size_t>(size), in.data()) == 0)
    for (unsigned char v : in) n += v & 1;
  ::munmap(map, static_cast<size_t>(size));
  return n * page;
}

int open_descriptors() {
  int n = 0;
  DIR *d = ::opendir("/proc/self/fd");
  if (!d) return -1;
  while (dirent *e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n - 1;  // the directory's own
}

zt_file *open_prefetch(const std::string &path, uint32_t access) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.access = access;
  o.prefetch = 1;
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(path.c_str(), &o, &f), ZT_OK) << zt_last_error();
  return f;
}

// Waits (up to 10 s) until the open files hold `want` descriptors: the
// prefetch thread has ended and closed its own.
bool settles_at(int want) {
  for (int i = 0; i < 200; ++i) {
    if (open_descriptors() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The reader's bytes, to check the file opens and reads as written.
void expect_tensor(zt_file *f, int i) {
  const std::string n = "t" + std::to_string(i);
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, n.data(), n.size(), &o), ZT_OK) << zt_last_error();
  uint8_t got[64] = {};
  size_t len = 0;
  ASSERT_EQ(zt_component_read(o, 0, got, sizeof got, &len), ZT_OK) << zt_last_error();
  ASSERT_EQ(len, 64u);
  for (uint8_t b : got) ASSERT_EQ(b, i + 1);
}

}  // namespace

// A 1 GiB sparse file with one 64-byte tensor: the thread brings in the
// tensor's pages, not the hole (the old thread read every byte up to the
// manifest: a gigabyte of zero pages per open). Then its second descriptor
// is closed: the reader keeps one, as without the option.
TEST(PrefetchBounds, ASparseFileReadsOnlyWhatItsComponentsCover) {
  TempDir dir;
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    SCOPED_TRACE("access " + std::to_string(access));
    const std::string path = write_sparse(dir, "sparse" + std::to_string(access) + ".zt", 3);
    const int before = open_descriptors();
    const uint64_t resident_before = resident_bytes(path);
    zt_file *f = open_prefetch(path, access);
    ASSERT_NE(f, nullptr);
    const bool ended = settles_at(before + 1);
    const uint64_t resident = resident_bytes(path);
    // Readahead around the tensor and the manifest reads may bring in a few
    // MiB; the hole is 1024 of them.
    EXPECT_LT(resident, (uint64_t{16} << 20) + resident_before) << resident << " bytes of the file in the page cache";
    EXPECT_TRUE(ended) << "the prefetch thread's second descriptor is still open: " << open_descriptors() - before
                       << " descriptors for one file";
    for (int i = 0; i < 3; ++i) expect_tensor(f, i);
    EXPECT_EQ(zt_close(f), ZT_OK);
    EXPECT_EQ(open_descriptors(), before);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    ::unlink(path.c_str());
  }
}

// Past the descriptor budget (a quarter of RLIMIT_NOFILE, here 64 / 4 =
// 16, taken by 16 mapped files that keep theirs), a prefetching open adds
// no second descriptor: the thread reads through the file's own. It still
// reads the tensor, and the budget is never exceeded.
TEST(PrefetchBounds, TheSecondDescriptorCountsAgainstTheBudget) {
  TempDir dir;
  // A small file: a 32-bit process maps only a few sparse GiB files, and
  // opens that fall back to pread hold no budget slot.
  const std::string path = write_dense(dir, "budget.zt");
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  // A low limit, with room for what the process holds already (a test
  // runner may hand down dozens of descriptors): the budget is a quarter.
  struct rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(old.rlim_cur, static_cast<rlim_t>(open_descriptors()) * 2 + 64);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const int budget = static_cast<int>(std::min<rlim_t>(low.rlim_cur / 4, 256));
  std::vector<zt_file *> held;
  while (zt::mapped_sources_holding_fds() < budget && held.size() < static_cast<size_t>(budget) + 8) {
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
    held.push_back(f);
  }
  ASSERT_EQ(zt::mapped_sources_holding_fds(), budget);
  const int before = open_descriptors();
  zt_file *f = open_prefetch(path, ZT_ACCESS_PREAD);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(open_descriptors(), before + 1) << "a prefetch thread opened a descriptor past the budget";
  EXPECT_LE(zt::mapped_sources_holding_fds(), budget);
  expect_tensor(f, 0);
  EXPECT_EQ(zt_close(f), ZT_OK);
  for (zt_file *h : held) zt_close(h);
  EXPECT_EQ(zt::mapped_sources_holding_fds(), 0);
  ::setrlimit(RLIMIT_NOFILE, &old);
  ::unlink(path.c_str());
}
