// The file a finish replaces is held across the rename and freed after it,
// on a background thread when it is big (src/platform/replaced_file.h).
// What must hold: the rename itself frees nothing; the old file is freed in
// the end, with no descriptor left behind; readers of the old file keep
// their bytes; files that are not the rename's to free are not held.
#include "platform/replaced_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "container/sink.h"

namespace {

using zt::ReplacedFile;

class ReplacedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zt_replaced_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    wait_for_background();
    std::string cmd = "rm -rf '" + dir_ + "'";
    (void)std::system(cmd.c_str());
  }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  // Whether this filesystem has room for a file of `size` to be freed on a
  // thread (ReplacedFile::worth_deferring); machines with little disk free
  // free inline, and the tests that need a thread skip there.
  bool room_to_defer(uint64_t size) const {
    struct statvfs fs;
    if (::statvfs(dir_.c_str(), &fs) != 0) return false;
    return ReplacedFile::worth_deferring(size, static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize);
  }

  static void write_file(const std::string &p, size_t size, uint8_t fill) {
    std::vector<uint8_t> buf(size, fill);
    FILE *f = std::fopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(buf.data(), 1, buf.size(), f), buf.size());
    ASSERT_EQ(std::fclose(f), 0);
  }

  // Descriptors of this process that lead to `p` after it was unlinked.
  static int deleted_fds_to(const std::string &p) {
    int n = 0;
    DIR *d = ::opendir("/proc/self/fd");
    if (!d) return -1;
    const std::string want = p + " (deleted)";
    while (dirent *e = ::readdir(d)) {
      std::string link = std::string("/proc/self/fd/") + e->d_name;
      char target[4096];
      ssize_t len = ::readlink(link.c_str(), target, sizeof target - 1);
      if (len > 0 && std::string(target, static_cast<size_t>(len)) == want) ++n;
    }
    ::closedir(d);
    return n;
  }

  static void wait_for_background() {
    for (int i = 0; i < 3000 && ReplacedFile::in_flight() > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(ReplacedFile::in_flight(), 0) << "background releases still running after 30 s";
  }

  std::string dir_;
};

TEST_F(ReplacedFileTest, TheRenameFreesNothingAndTheReleaseFreesTheOldFileOnAThread) {
  const std::string dst = path("model.zt"), tmp = path("model.zt.tmp");
  if (!room_to_defer(ReplacedFile::kBackgroundMinSize * 4)) GTEST_SKIP() << "too little disk free here";
  write_file(dst, ReplacedFile::kBackgroundMinSize + 4096, 0xAA);
  write_file(tmp, 4096, 0x55);
  ReplacedFile old(dst);
  ASSERT_TRUE(old.held());
  ASSERT_EQ(::rename(tmp.c_str(), dst.c_str()), 0);
  // The old inode outlives its name: nothing was freed inside the rename.
  EXPECT_EQ(deleted_fds_to(dst), 1);
  old.release();
  EXPECT_TRUE(old.released_in_background());
  EXPECT_FALSE(old.held());
  wait_for_background();
  EXPECT_EQ(deleted_fds_to(dst), 0) << "the old file was never freed";
}

TEST(ReplacedFilePolicy, OnlyBigFilesOnAFilesystemWithRoomToSpareAreFreedOnAThread) {
  const uint64_t min = ReplacedFile::kBackgroundMinSize, gib = uint64_t{1} << 30;
  EXPECT_FALSE(ReplacedFile::worth_deferring(min - 1, 100 * gib));
  EXPECT_TRUE(ReplacedFile::worth_deferring(min, 100 * gib));
  EXPECT_TRUE(ReplacedFile::worth_deferring(10 * gib, 20 * gib));
  // A nearly full disk: the next write may need the old file's blocks.
  EXPECT_FALSE(ReplacedFile::worth_deferring(10 * gib, 20 * gib - 1));
  EXPECT_FALSE(ReplacedFile::worth_deferring(min, 0));  // unknown free space
}

TEST_F(ReplacedFileTest, SmallFilesAreFreedInline) {
  const std::string dst = path("small.zt"), tmp = path("small.zt.tmp");
  write_file(dst, 8192, 1);
  write_file(tmp, 16, 2);
  ReplacedFile old(dst);
  ASSERT_TRUE(old.held());
  ASSERT_EQ(::rename(tmp.c_str(), dst.c_str()), 0);
  old.release();
  EXPECT_FALSE(old.released_in_background());
  EXPECT_EQ(deleted_fds_to(dst), 0);
}

TEST_F(ReplacedFileTest, DroppedWithoutAReleaseFreesInline) {
  const std::string dst = path("big.zt"), tmp = path("big.zt.tmp");
  write_file(dst, ReplacedFile::kBackgroundMinSize, 1);
  write_file(tmp, 16, 2);
  {
    ReplacedFile old(dst);
    ASSERT_TRUE(old.held());
    ASSERT_EQ(::rename(tmp.c_str(), dst.c_str()), 0);
  }
  EXPECT_EQ(deleted_fds_to(dst), 0);
  EXPECT_EQ(ReplacedFile::in_flight(), 0);
}

TEST_F(ReplacedFileTest, HoldsOnlyARegularFileTheRenameWouldFree) {
  EXPECT_FALSE(ReplacedFile(path("absent.zt")).held());
  EXPECT_FALSE(ReplacedFile(dir_).held());
  // Another name keeps the file alive: the rename frees nothing to defer.
  write_file(path("linked.zt"), 4096, 3);
  ASSERT_EQ(::link(path("linked.zt").c_str(), path("other-name.zt").c_str()), 0);
  EXPECT_FALSE(ReplacedFile(path("linked.zt")).held());
  // A symlink is the link itself here (the sink resolves links first).
  ASSERT_EQ(::symlink(path("absent.zt").c_str(), path("dangling.zt").c_str()), 0);
  EXPECT_FALSE(ReplacedFile(path("dangling.zt")).held());
  // No permission is needed to hold a file: nothing is read from it.
  write_file(path("locked.zt"), 4096, 4);
  ASSERT_EQ(::chmod(path("locked.zt").c_str(), 0), 0);
  EXPECT_TRUE(ReplacedFile(path("locked.zt")).held());
}

TEST_F(ReplacedFileTest, NoMoreThreadsThanTheCapAtOnce) {
  std::vector<std::unique_ptr<ReplacedFile>> held;
  for (int i = 0; i < ReplacedFile::kMaxInFlight + 3; ++i) {
    const std::string p = path("f" + std::to_string(i));
    write_file(p, ReplacedFile::kBackgroundMinSize, static_cast<uint8_t>(i));
    held.push_back(std::make_unique<ReplacedFile>(p));
    ASSERT_TRUE(held.back()->held());
    ASSERT_EQ(::unlink(p.c_str()), 0);
  }
  for (auto &h : held) {
    h->release();
    EXPECT_LE(ReplacedFile::in_flight(), ReplacedFile::kMaxInFlight);
  }
  wait_for_background();
  for (int i = 0; i < ReplacedFile::kMaxInFlight + 3; ++i) EXPECT_EQ(deleted_fds_to(path("f" + std::to_string(i))), 0);
}

// Through the file sink, as every finish replaces a file: the new bytes are
// in place, a reader that mapped the old file keeps its bytes, and the old
// file is freed in the end.
TEST_F(ReplacedFileTest, ASinkReplacingABigFileLeavesNothingBehind) {
  const std::string dst = path("ckpt.zt");
  const size_t old_size = ReplacedFile::kBackgroundMinSize * 2;
  const bool deferred = room_to_defer(old_size * 2);
  write_file(dst, old_size, 0x11);
  int rfd = ::open(dst.c_str(), O_RDONLY);
  ASSERT_GE(rfd, 0);
  void *map = ::mmap(nullptr, old_size, PROT_READ, MAP_SHARED, rfd, 0);
  ASSERT_NE(map, MAP_FAILED);
  ::close(rfd);

  std::vector<uint8_t> fresh(3 << 20, 0x77);
  {
    zt::FileSink sink(dst);
    sink.write(fresh.data(), fresh.size());
    sink.commit(false);
    EXPECT_EQ(sink.replaced_in_background(), deferred);
  }
  struct stat st;
  ASSERT_EQ(::stat(dst.c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), fresh.size());
  std::vector<uint8_t> back(fresh.size());
  FILE *f = std::fopen(dst.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fread(back.data(), 1, back.size(), f), back.size());
  std::fclose(f);
  EXPECT_EQ(back, fresh);

  const auto *old = static_cast<const uint8_t *>(map);
  EXPECT_EQ(old[0], 0x11);
  EXPECT_EQ(old[old_size - 1], 0x11);
  ::munmap(map, old_size);
  wait_for_background();
  EXPECT_EQ(deleted_fds_to(dst), 0);
}

}  // namespace
