// A writer that replaces an existing path keeps what the path was: a symlink
// stays a symlink and its target gets the new file, the replaced file's mode
// (and owner, where the process may set it) carries over, and paths that
// cannot be replaced (directories, FIFOs, symlink loops) are refused before
// anything is written.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

using zttest::TempDir;

namespace {

zt_status write_one(const std::string &path, float value) {
  zt_writer_options o;
  zt_writer_options_init(&o);
  o.sync = 0;
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(path.c_str(), &o, &w);
  if (st != ZT_OK) return st;
  const uint64_t shape[1] = {1};
  st = zt_writer_add_dense(w, "v", 1, ZT_F32, shape, 1, &value, sizeof value, nullptr);
  if (st != ZT_OK) {
    zt_writer_discard(w);
    return st;
  }
  return zt_writer_finish(w);
}

float read_one(const std::string &path) {
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, "v", 1, &o), ZT_OK);
  float v = -1;
  size_t n = 0;
  EXPECT_EQ(zt_component_read(o, 0, &v, sizeof v, &n), ZT_OK);
  zt_close(f);
  return v;
}

mode_t mode_of(const std::string &p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = ::opendir(dir.c_str());
  while (dirent *e = ::readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Replace, KeepsTheModeOfTheReplacedFile) {
  TempDir tmp;
  const std::string p = tmp.file("m.zt");
  ASSERT_EQ(write_one(p, 1), ZT_OK);
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  ASSERT_EQ(write_one(p, 2), ZT_OK) << zt_last_error();
  EXPECT_EQ(mode_of(p), 0640u);
  EXPECT_EQ(read_one(p), 2.0f);
}

TEST(Replace, NewFileGetsUmaskPermissions) {
  TempDir tmp;
  const mode_t old = ::umask(027);
  const std::string p = tmp.file("new.zt");
  zt_status st = write_one(p, 1);
  ::umask(old);
  ASSERT_EQ(st, ZT_OK);
  EXPECT_EQ(mode_of(p), 0640u);
}

TEST(Replace, KeepsOwnerWhenRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file to another owner";
  TempDir tmp;
  const std::string p = tmp.file("o.zt");
  ASSERT_EQ(write_one(p, 1), ZT_OK);
  ASSERT_EQ(::chown(p.c_str(), 4321, 8765), 0);
  ASSERT_EQ(write_one(p, 2), ZT_OK);
  struct stat st;
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4321u);
  EXPECT_EQ(st.st_gid, 8765u);
}

TEST(Replace, SymlinkChainIsFollowedToItsTarget) {
  TempDir tmp;
  ASSERT_EQ(::mkdir(tmp.file("sub").c_str(), 0755), 0);
  const std::string target = tmp.file("sub/real.zt");
  ASSERT_EQ(write_one(target, 1), ZT_OK);
  ASSERT_EQ(::symlink("sub/real.zt", tmp.file("l1").c_str()), 0);           // relative
  ASSERT_EQ(::symlink(tmp.file("l1").c_str(), tmp.file("l2").c_str()), 0);  // absolute, to a link
  ASSERT_EQ(write_one(tmp.file("l2"), 3), ZT_OK) << zt_last_error();
  struct stat st;
  ASSERT_EQ(::lstat(tmp.file("l2").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(::lstat(tmp.file("l1").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read_one(target), 3.0f);
  EXPECT_EQ(entries(tmp.file("sub")), std::vector<std::string>{"real.zt"});
}

// A dangling link is refused, not followed (issue 27): following it would
// create a file wherever the link's owner chose. Nothing is created.
TEST(Replace, DanglingSymlinkIsRefused) {
  TempDir tmp;
  ASSERT_EQ(::symlink("made.zt", tmp.file("dangling").c_str()), 0);
  ASSERT_EQ(write_one(tmp.file("dangling"), 4), ZT_E_IO);
  EXPECT_NE(std::string(zt_last_error()).find("dangling"), std::string::npos) << zt_last_error();
  struct stat st;
  ASSERT_EQ(::lstat(tmp.file("dangling").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(::lstat(tmp.file("made.zt").c_str(), &st), 0);
  EXPECT_EQ(entries(tmp.path()), std::vector<std::string>{"dangling"});
}

TEST(Replace, UnreplaceablePathsAreRefusedBeforeWriting) {
  TempDir tmp;
  ASSERT_EQ(::symlink("loop-b", tmp.file("loop-a").c_str()), 0);
  ASSERT_EQ(::symlink("loop-a", tmp.file("loop-b").c_str()), 0);
  ASSERT_EQ(::mkfifo(tmp.file("fifo").c_str(), 0644), 0);
  ASSERT_EQ(::mkdir(tmp.file("dir").c_str(), 0755), 0);
  for (const char *name : {"loop-a", "fifo", "dir"}) {
    SCOPED_TRACE(name);
    zt_writer_options o;
    zt_writer_options_init(&o);
    zt_writer *w = nullptr;
    EXPECT_EQ(zt_writer_create(tmp.file(name).c_str(), &o, &w), ZT_E_IO);
    EXPECT_EQ(w, nullptr);
    EXPECT_NE(std::string(zt_last_error()).find(name), std::string::npos) << zt_last_error();
  }
  EXPECT_EQ(entries(tmp.path()), (std::vector<std::string>{"dir", "fifo", "loop-a", "loop-b"}));
}

// Issue 27: while a file is written its temporary has no name where the
// filesystem has O_TMPFILE (the test's folder usually does): a SIGKILL then
// leaves nothing. A named temporary (elsewhere) carries the writer's pid.
TEST(Replace, TheTemporaryIsInvisibleWhileWriting) {
  TempDir tmp;
  const int probe = ::open(tmp.path().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (probe < 0) GTEST_SKIP() << "no O_TMPFILE here: " << std::strerror(errno);
  ::close(probe);
  ASSERT_EQ(write_one(tmp.file("a.zt"), 1), ZT_OK);
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(tmp.file("a.zt").c_str(), nullptr, &w), ZT_OK) << zt_last_error();
  std::vector<float> v(1 << 20, 2.0f);
  const uint64_t shape = v.size();
  ASSERT_EQ(zt_writer_add_dense(w, "t", 1, ZT_F32, &shape, 1, v.data(), v.size() * 4, nullptr), ZT_OK);
  EXPECT_EQ(entries(tmp.path()), std::vector<std::string>{"a.zt"});
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  EXPECT_EQ(entries(tmp.path()), std::vector<std::string>{"a.zt"});
}

}  // namespace
