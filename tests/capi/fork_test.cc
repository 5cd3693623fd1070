// Forked children survive (issue 37): a process that forks while the
// library's threads run (the prefetch thread, zstd's workers) or while
// another thread holds one of its locks gets a child that can use its
// inherited files, make threads of its own, close them and exit. Each
// child runs under alarm(): a hang is a failure (SIGALRM), not a stuck
// suite.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_io.h"

using zttest::TempDir;

namespace {
const pid_t g_test_pid = ::getpid();
std::atomic<bool> g_no_tmpfile{false};
}  // namespace

// While g_no_tmpfile is set, open(2) with O_TMPFILE fails as on a file
// system without it (vfat, older NFS), so the writer names its temporary
// (the library's calls bind to this definition: an executable's symbols
// come first). Everything else is the system call.
extern "C" int open64(const char *path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  if (g_no_tmpfile.load() && (flags & O_TMPFILE) == O_TMPFILE) {
    errno = EOPNOTSUPP;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}

// LeakSanitizer (the ASan build, .ci/sanitize.sh) checks every process at
// exit, children too: there what belongs to the parent's threads is left
// alone on purpose (the threads are not there to free it), and memory only
// their stacks pointed to looks lost. The check stays on in the parent.
extern "C" int __lsan_is_turned_off() {
  return ::getpid() != g_test_pid;
}

namespace {

// GCC 12's AddressSanitizer takes no lock of its allocator around fork: a
// child forked while another thread is inside malloc waits in its first
// malloc forever (seen here, in __asan::Allocator::Allocate). The tests
// whose other thread allocates without pause skip under it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsanAllocatorForksUnsafely = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsanAllocatorForksUnsafely = true;
#else
constexpr bool kAsanAllocatorForksUnsafely = false;
#endif
#else
constexpr bool kAsanAllocatorForksUnsafely = false;
#endif

constexpr int kTensors = 6;
constexpr size_t kTensorBytes = size_t{12} << 20;

uint8_t byte_of(int tensor, size_t i) {
  return static_cast<uint8_t>(tensor * 31 + i * 7 + (i >> 12));
}

std::string write_file(const TempDir &dir, const std::string &name, zt_encoding encoding = ZT_ENCODING_RAW,
                       uint32_t threads = 0) {
  const std::string path = dir.file(name);
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.threads = threads;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  std::vector<uint8_t> v(kTensorBytes);
  for (int t = 0; t < kTensors; ++t) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = byte_of(t, i);
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = encoding;
    const uint64_t shape[1] = {v.size()};
    const std::string n = "t" + std::to_string(t);
    EXPECT_EQ(zt_writer_add_dense(w, n.data(), n.size(), ZT_U8, shape, 1, v.data(), v.size(), &bo), ZT_OK)
        << zt_last_error();
  }
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return path;
}

// Drops the file from the page cache, so that the prefetch thread has work
// (and is still running when the test forks).
void evict(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// 0 when every tensor reads back whole, through single reads and one
// zt_file_read_many (which, with prefetch, waits behind the thread).
int check_reads(zt_file *f) {
  std::vector<std::vector<uint8_t>> bufs(kTensors, std::vector<uint8_t>(kTensorBytes));
  std::vector<zt_read_request> reqs(kTensors);
  for (int t = 0; t < kTensors; ++t) {
    const std::string n = "t" + std::to_string(t);
    if (zt_file_object_by_name(f, n.data(), n.size(), &reqs[t].object) != ZT_OK) return 20;
    reqs[t].dst = bufs[t].data();
    reqs[t].dst_capacity = bufs[t].size();
  }
  if (zt_file_read_many(f, reqs.data(), reqs.size()) != ZT_OK) return 21;
  for (int t = 0; t < kTensors; ++t)
    for (size_t i = 0; i < kTensorBytes; i += 4093)
      if (bufs[t][i] != byte_of(t, i)) return 22;
  size_t n = 0;
  if (zt_component_read(reqs[kTensors - 1].object, 0, bufs[0].data(), bufs[0].size(), &n) != ZT_OK) return 23;
  if (n != kTensorBytes || bufs[0][kTensorBytes - 1] != byte_of(kTensors - 1, kTensorBytes - 1)) return 24;
  return 0;
}

// A thread of the child's own, made and joined (a DataLoader worker's
// pin-memory thread, a thread pool): after it, the ids of the parent's
// threads may name it.
int make_and_join_a_thread() {
  std::atomic<int> ran{0};
  std::thread t([&] { ran = 1; });
  t.join();
  return ran.load() == 1 ? 0 : 30;
}

// Runs body() in a forked child under an alarm of `seconds`; its exit
// status, or 128 + the signal that ended it.
template <typename Body>
int in_child(Body body, unsigned seconds = 30) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(seconds);
    const int rc = body();
    // exit(), not _exit(): thread-local and static destructors run, as in
    // a child that returns from main (the zstd contexts are freed there).
    std::exit(rc);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace

// Fork while the prefetch thread reads the file; the child makes and joins
// a thread, reads everything (zt_file_read_many must not wait for the
// parent's thread: it is not in the child), closes the file and exits 0.
// The parent's file is unaffected. Before: SIGABRT at zt_close in the child
// (the prefetcher joined a thread id that the child's own thread had
// taken), or a hang in zt_file_read_many.
TEST(Fork, AChildUsesAndClosesAFileWhosePrefetchThreadRuns) {
  TempDir dir;
  const std::string path = write_file(dir, "prefetch.zt");
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    SCOPED_TRACE("access " + std::to_string(access));
    evict(path);
    zt_open_options o;
    zt_open_options_init(&o);
    o.prefetch = 1;
    o.access = access;
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path.c_str(), &o, &f), ZT_OK) << zt_last_error();
    const int rc = in_child([&] {
      if (int r = make_and_join_a_thread()) return r;
      if (int r = check_reads(f)) return r;
      if (zt_close(f) != ZT_OK) return 40;
      return make_and_join_a_thread();
    });
    EXPECT_EQ(rc, 0) << "134 = SIGABRT, 142 = SIGALRM (a hang); 2x = a read failed";
    EXPECT_EQ(check_reads(f), 0);
    EXPECT_EQ(zt_close(f), ZT_OK);
  }
}

// The thread that forks has an idle zstd context whose worker threads are
// the parent's: the child compresses with workers of its own and exits
// (thread-local destructors run). Before: the child hung waiting for the
// parent's workers, or joining them at exit.
TEST(Fork, AChildCompressesWithZstdWorkersAfterTheParentDid) {
  TempDir dir;
  write_file(dir, "parent.zt", ZT_ENCODING_ZSTD, 2);  // leaves an idle context with 2 workers on this thread
  const int rc = in_child([&] {
    if (int r = make_and_join_a_thread()) return r;
    const std::string path = write_file(dir, "child.zt", ZT_ENCODING_ZSTD, 2);
    zt_file *f = nullptr;
    if (zt_open(path.c_str(), nullptr, &f) != ZT_OK) return 50;
    const int r = check_reads(f);
    zt_close(f);
    return r;
  });
  EXPECT_EQ(rc, 0) << "142 = SIGALRM: the child hung on the parent's zstd workers";
  const std::string again = write_file(dir, "parent2.zt", ZT_ENCODING_ZSTD, 2);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(again.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  EXPECT_EQ(check_reads(f), 0);
  zt_close(f);
}

// Another thread calls into the library all the time (each call takes the
// handle registry's lock) while this one forks: every child must be able
// to open and close files. Before: a child forked while the other thread
// held the lock waited for it forever.
TEST(Fork, AChildOpensAndClosesWhileAnotherThreadWasInTheLibrary) {
  if (kAsanAllocatorForksUnsafely) GTEST_SKIP() << "AddressSanitizer's allocator is not fork-safe (see above)";
  TempDir dir;
  const std::string path = dir.file("small.zt");
  {
    zt_writer *w = nullptr;
    ASSERT_EQ(zt_writer_create(path.c_str(), nullptr, &w), ZT_OK) << zt_last_error();
    const uint8_t v[4] = {1, 2, 3, 4};
    const uint64_t shape[1] = {4};
    ASSERT_EQ(zt_writer_add_dense(w, "v", 1, ZT_U8, shape, 1, v, sizeof v, nullptr), ZT_OK);
    ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  }
  zt_file *shared = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &shared), ZT_OK) << zt_last_error();
  std::atomic<bool> busy{true};
  std::thread other([&] {
    zt_file *mine = nullptr;
    while (busy.load()) {
      // Shared and exclusive holds of the registry lock, back to back.
      size_t n = 0;
      for (int i = 0; i < 50; ++i) (void)zt_file_object_count(shared, &n);
      if (zt_open(path.c_str(), nullptr, &mine) == ZT_OK) zt_close(mine);
    }
  });
  int failures = 0, last = 0;
  for (int round = 0; round < 40; ++round) {
    const int rc = in_child(
        [&] {
          for (int i = 0; i < 3; ++i) {
            zt_file *f = nullptr;
            if (zt_open(path.c_str(), nullptr, &f) != ZT_OK) return 60;
            size_t n = 0;
            if (zt_file_object_count(f, &n) != ZT_OK || n != 1) return 61;
            if (zt_close(f) != ZT_OK) return 62;
          }
          return zt_close(shared) == ZT_OK ? 0 : 63;
        },
        5);
    if (rc != 0) {
      ++failures;
      last = rc;
      break;
    }
  }
  busy = false;
  other.join();
  EXPECT_EQ(failures, 0) << "last child status " << last << " (142 = SIGALRM: a hang)";
  EXPECT_EQ(zt_close(shared), ZT_OK);
}

// A writer is its creator's: a child that drops one it inherited (a
// garbage-collected Python Writer in a worker) must leave the parent's
// named temporary where it is, and the parent's finish must succeed.
// Before: the child's discard unlinked it and the parent's rename failed.
TEST(Fork, AChildThatDropsAnInheritedWriterLeavesTheParentsTemporary) {
  TempDir dir;
  const std::string path = dir.file("w.zt");
  g_no_tmpfile = true;
  zt_writer *w = nullptr;
  const zt_status created = zt_writer_create(path.c_str(), nullptr, &w);
  g_no_tmpfile = false;
  ASSERT_EQ(created, ZT_OK) << zt_last_error();
  const uint8_t v[4] = {9, 8, 7, 6};
  const uint64_t shape[1] = {4};
  ASSERT_EQ(zt_writer_add_dense(w, "v", 1, ZT_U8, shape, 1, v, sizeof v, nullptr), ZT_OK);
  const int rc = in_child([&] {
    zt_writer_discard(w);
    return 0;
  });
  EXPECT_EQ(rc, 0);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  size_t n = 0;
  EXPECT_EQ(zt_file_object_count(f, &n), ZT_OK);
  EXPECT_EQ(n, 1u);
  zt_close(f);
}

namespace {

// A tiny HTTP/1.1 server of one file's bytes with byte ranges (keep-alive,
// a thread per connection), on a free loopback port, for a file opened
// with zt_open_url. Its threads live in the parent; children connect to it.
class RangeServer {
 public:
  explicit RangeServer(std::string data) : data_(std::move(data)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
    std::thread([this] { accept_loop(); }).detach();
  }
  ~RangeServer() { ::shutdown(fd_, SHUT_RDWR); }  // the accept loop ends; the object outlives the test
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/f.zt"; }
  bool ok() const { return port_ != 0; }

 private:
  void accept_loop() {
    for (;;) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      std::thread([this, c] { serve(c); }).detach();
    }
  }
  void serve(int c) {
    std::string in;
    char buf[4096];
    for (;;) {
      size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) {
          ::close(c);
          return;
        }
        in.append(buf, static_cast<size_t>(n));
      }
      const std::string head = in.substr(0, end);
      in.erase(0, end + 4);
      uint64_t first = 0, last = data_.size() - 1;
      const size_t r = head.find("Range: bytes=");
      if (r != std::string::npos) {
        const char *p = head.c_str() + r + 13;
        if (*p == '-') {
          first = data_.size() - std::min<uint64_t>(data_.size(), std::strtoull(p + 1, nullptr, 10));
        } else {
          char *dash = nullptr;
          first = std::strtoull(p, &dash, 10);
          if (dash && dash[1] >= '0' && dash[1] <= '9')
            last = std::min<uint64_t>(last, std::strtoull(dash + 1, nullptr, 10));
        }
      }
      const std::string reply = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(first) + "-" +
                                std::to_string(last) + "/" + std::to_string(data_.size()) +
                                "\r\nContent-Length: " + std::to_string(last + 1 - first) +
                                "\r\nETag: \"fork\"\r\n\r\n" + data_.substr(first, last + 1 - first);
      for (size_t done = 0; done < reply.size();) {
        const ssize_t n = ::send(c, reply.data() + done, reply.size() - done, MSG_NOSIGNAL);
        if (n <= 0) {
          ::close(c);
          return;
        }
        done += static_cast<size_t>(n);
      }
    }
  }
  std::string data_;
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace

// A URL file's block cache and connection pool have locks that another
// thread of the parent may hold at the fork (here: one that reads a cached
// tensor without pause). The child reads (its own connections, around the
// cache) and closes the file. Before: a child forked inside such a lock
// waited for it forever.
TEST(Fork, AChildReadsAURLFileWhileAnotherThreadWasReadingIt) {
  if (kAsanAllocatorForksUnsafely) GTEST_SKIP() << "AddressSanitizer's allocator is not fork-safe (see above)";
  TempDir dir;
  const std::string path = dir.file("u.zt");
  {
    zt_writer *w = nullptr;
    ASSERT_EQ(zt_writer_create(path.c_str(), nullptr, &w), ZT_OK) << zt_last_error();
    std::vector<uint8_t> small(64, 5), big(size_t{1} << 20, 6);  // big keeps "s" out of the open's tail read
    uint64_t shape[1] = {small.size()};
    ASSERT_EQ(zt_writer_add_dense(w, "s", 1, ZT_U8, shape, 1, small.data(), small.size(), nullptr), ZT_OK);
    shape[0] = big.size();
    ASSERT_EQ(zt_writer_add_dense(w, "b", 1, ZT_U8, shape, 1, big.data(), big.size(), nullptr), ZT_OK);
    ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  }
  FILE *fp = std::fopen(path.c_str(), "rb");
  ASSERT_NE(fp, nullptr);
  std::string bytes;
  char chunk[65536];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, fp)) > 0;) bytes.append(chunk, n);
  std::fclose(fp);
  // Left to the process (reachable from here): its threads may outlive the test.
  static RangeServer *server = new RangeServer(bytes);
  ASSERT_TRUE(server->ok());
  zt_url_options uo;
  zt_url_options_init(&uo);
  uo.retries = 0;
  zt_file *f = nullptr;
  const zt_status opened = zt_open_url(server->url().c_str(), &uo, nullptr, &f);
  if (opened == ZT_E_UNSUPPORTED) GTEST_SKIP() << "built without libcurl";
  ASSERT_EQ(opened, ZT_OK) << zt_last_error();
  const zt_object *s = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "s", 1, &s), ZT_OK);
  auto read_s = [](const zt_object *o) {
    uint8_t got[64] = {};
    size_t n = 0;
    return zt_component_read(o, 0, got, sizeof got, &n) == ZT_OK && n == 64 && got[0] == 5 && got[63] == 5;
  };
  ASSERT_TRUE(read_s(s)) << zt_last_error();  // now in the block cache
  std::atomic<bool> busy{true};
  std::thread other([&] {
    while (busy.load()) (void)read_s(s);
  });
  int failures = 0, last = 0;
  for (int round = 0; round < 40; ++round) {
    const int rc = in_child(
        [&] {
          if (!read_s(s)) return 70;
          const zt_object *b = nullptr;
          if (zt_file_object_by_name(f, "b", 1, &b) != ZT_OK) return 71;
          std::vector<uint8_t> got(size_t{1} << 20);
          size_t n = 0;
          if (zt_component_read(b, 0, got.data(), got.size(), &n) != ZT_OK || n != got.size() || got[n - 1] != 6)
            return 72;
          return zt_close(f) == ZT_OK ? 0 : 73;
        },
        5);
    if (rc != 0) {
      ++failures;
      last = rc;
      break;
    }
  }
  busy = false;
  other.join();
  EXPECT_EQ(failures, 0) << "last child status " << last << " (142 = SIGALRM: a hang)";
  EXPECT_TRUE(read_s(s));
  EXPECT_EQ(zt_close(f), ZT_OK);
}
