// The library never changes process-wide state (issue 37): creating a file
// used to read the umask with umask(0) + umask(mask), and for that instant
// every file another thread created came out world-writable.
//
// This binary defines umask itself: the dynamic linker binds the library's
// calls to it (an executable's symbols come first), so the test counts them
// and holds the window umask(0) opens for a millisecond, which makes the
// race of the old code certain instead of rare.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

using zttest::TempDir;

namespace {
std::atomic<int> g_umask_calls{0};
std::atomic<bool> g_widen{false};
}  // namespace

extern "C" mode_t umask(mode_t mask) noexcept {
  g_umask_calls.fetch_add(1);
  const mode_t old = static_cast<mode_t>(::syscall(SYS_umask, mask));
  if (mask == 0 && g_widen.load()) ::usleep(1000);
  return old;
}

namespace {

zt_status write_new(const std::string &path) {
  zt_writer_options o;
  zt_writer_options_init(&o);
  o.sync = 0;
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(path.c_str(), &o, &w);
  if (st != ZT_OK) return st;
  const float v = 1;
  const uint64_t shape[1] = {1};
  st = zt_writer_add_dense(w, "v", 1, ZT_F32, shape, 1, &v, sizeof v, nullptr);
  if (st != ZT_OK) {
    zt_writer_discard(w);
    return st;
  }
  return zt_writer_finish(w);
}

mode_t mode_of(const std::string &p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Restores the process's umask when a test ends, however it ends.
struct UmaskScope {
  mode_t old;
  explicit UmaskScope(mode_t m) : old(static_cast<mode_t>(::syscall(SYS_umask, m))) {}
  ~UmaskScope() { ::syscall(SYS_umask, old); }
};

TEST(ProcessState, WritingANewFileNeverCallsUmask) {
  TempDir tmp;
  UmaskScope scope(027);
  g_umask_calls = 0;
  ASSERT_EQ(write_new(tmp.file("new.zt")), ZT_OK) << zt_last_error();
  ASSERT_EQ(write_new(tmp.file("new.zt")), ZT_OK) << zt_last_error();  // a replace too
  EXPECT_EQ(g_umask_calls.load(), 0) << "the library changed the process's umask";
  // The kernel applied the umask at creation instead.
  EXPECT_EQ(mode_of(tmp.file("new.zt")), 0640u);
}

// One thread creates files with mode 0666 while another writes new files
// through the library: none of the first thread's files may ever be more
// permissive than the umask allows, and the library's get the umask too.
TEST(ProcessState, FilesOfOtherThreadsKeepTheUmask) {
  TempDir tmp;
  UmaskScope scope(022);
  g_widen = true;
  std::atomic<bool> writing{true};
  std::atomic<int> too_open{0}, made{0};
  std::thread other([&] {
    for (int i = 0; writing.load() || i < 10; ++i) {
      const std::string p = tmp.file("other-" + std::to_string(i));
      const int fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
      if (fd < 0) continue;
      struct stat st;
      if (::fstat(fd, &st) == 0 && (st.st_mode & 0022) != 0) too_open.fetch_add(1);
      ::close(fd);
      ::unlink(p.c_str());
      made.fetch_add(1);
    }
  });
  zt_status st = ZT_OK;
  for (int i = 0; i < 50 && st == ZT_OK; ++i) st = write_new(tmp.file("lib-" + std::to_string(i) + ".zt"));
  writing = false;
  other.join();
  g_widen = false;
  ASSERT_EQ(st, ZT_OK) << zt_last_error();
  EXPECT_GT(made.load(), 0);
  EXPECT_EQ(too_open.load(), 0) << "files created on another thread came out group/world-writable";
  for (int i = 0; i < 50; ++i) EXPECT_EQ(mode_of(tmp.file("lib-" + std::to_string(i) + ".zt")), 0644u);
}

// Without O_TMPFILE the temporary has a name; it is created with the
// umask applied too (mkostemp made it 0600, then fchmod with the umask read
// the racy way). The folder here may lack O_TMPFILE or not: either path
// must give 0666 & ~umask.
TEST(ProcessState, ANewFileTakesTheUmaskOfItsFolderOrProcess) {
  TempDir tmp;
  for (mode_t mask : {mode_t{0}, mode_t{077}, mode_t{002}}) {
    UmaskScope scope(mask);
    const std::string p = tmp.file("m" + std::to_string(mask) + ".zt");
    ASSERT_EQ(write_new(p), ZT_OK) << zt_last_error();
    EXPECT_EQ(mode_of(p), 0666u & ~mask) << "umask " << mask;
  }
}

}  // namespace
