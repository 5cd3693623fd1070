// The scan for temporaries of killed writers (platform/posix/temp_file.h)
// reads the destination's folder. It used to run for every writer, so N
// files written into one folder read O(N^2) entries; now a process scans a
// folder only when it changed since the process last left it clean. What
// must hold: N writes into one folder cost one scan; a temporary a dead
// writer of another process left (named, as without O_TMPFILE) is still
// removed by the next writer to its destination, including one whose writer was
// alive at the last scan and died since.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "container/sink.h"
#include "platform/posix/temp_file.h"
#include "test_util.h"

namespace {

using zt::FileSink;
using zt::FolderScans;

void write_file(const std::string &path) {
  FileSink sink(path);
  const char bytes[] = "zt";
  sink.write(bytes, sizeof bytes);
  sink.commit(false);
}

bool exists(const std::string &path) {
  return ::access(path.c_str(), F_OK) == 0;
}

// A child makes a named temporary for `dest` as a writer without O_TMPFILE
// does, tells the parent its name through `fds`, and then either exits at
// once (killed: nothing cleans up) or waits until it is killed.
pid_t child_with_temp(const std::string &dest, bool wait_for_kill, std::string &name) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string made;
    const int fd = zt::create_named_temp(dest, FileSink::kTempTag, made);
    const std::string msg = (fd >= 0 ? made : std::string()) + "\n";
    (void)!::write(fds[1], msg.data(), msg.size());
    ::close(fds[1]);
    if (wait_for_kill)
      for (;;) ::pause();
    ::_exit(0);  // the descriptor (and its lock) go with the process; the name stays
  }
  ::close(fds[1]);
  // The name, up to its newline (a waiting child keeps its end open).
  char c;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') name += c;
  ::close(fds[0]);
  return pid;
}

TEST(StaleTempScan, ManyFilesInOneFolderCostOneScan) {
  zttest::TempDir dir;
  const unsigned long before = FolderScans::instance().scans();
  constexpr int kFiles = 300;
  for (int i = 0; i < kFiles; ++i) write_file(dir.file("f" + std::to_string(i) + ".zt"));
  // Rewriting files already there (renames over them) costs no scan either.
  for (int i = 0; i < 10; ++i) write_file(dir.file("f" + std::to_string(i) + ".zt"));
  const unsigned long scans = FolderScans::instance().scans() - before;
  std::printf("%d writes into one folder: %lu folder scans (readdir passes)\n", kFiles + 10, scans);
  EXPECT_LE(scans, 1u);
}

TEST(StaleTempScan, DeadWritersTemporaryIsRemovedByTheNextWriter) {
  zttest::TempDir dir;
  const std::string dest = dir.file("model.zt");
  write_file(dest);  // this process has scanned the folder: it is clean
  write_file(dir.file("other.zt"));
  std::string stray;
  const pid_t pid = child_with_temp(dest, false, stray);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_FALSE(stray.empty());
  ASSERT_TRUE(exists(stray)) << stray;
  // A writer to another destination leaves it to the destination's own.
  write_file(dir.file("third.zt"));
  EXPECT_TRUE(exists(stray)) << "another destination's temporary was removed";
  // The next writer to the destination removes it.
  write_file(dest);
  EXPECT_FALSE(exists(stray)) << stray << " survived the next writer";
}

TEST(StaleTempScan, WriterAliveAtTheScanIsCleanedAfterItDies) {
  zttest::TempDir dir;
  const std::string dest = dir.file("model.zt");
  write_file(dest);
  std::string stray;
  const pid_t pid = child_with_temp(dest, true, stray);
  ASSERT_GT(pid, 0);
  ASSERT_FALSE(stray.empty());
  // The child is alive: its temporary stays.
  write_file(dest);
  EXPECT_TRUE(exists(stray)) << "a live writer's temporary was removed";
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // Its death changed nothing in the folder; the next writer removes it all the same.
  write_file(dest);
  EXPECT_FALSE(exists(stray)) << stray << " survived the next writer after its writer died";
}

}  // namespace
