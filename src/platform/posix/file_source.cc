// The POSIX file sources of platform/file_source.h: a private map
// (copy-on-write) with pread/preadv copies, or pread alone; readahead
// advice, page-cache residency (mincore), population (MADV_POPULATE_READ),
// and a second opening through /proc/self/fd. What every source shares is
// in src/container/source.cc.
#include "platform/file_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <limits>
#include <new>

#include "container/source.h"
#include "platform/file.h"
#include "platform/posix/iovec_util.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace {

std::string errno_text(const std::string &what, const std::string &path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

// An open regular file (platform/file.h).
using FileDescriptor = platform::InputFile;

// A mapped file needs its descriptor only for the pread copies below, so
// mapped files keep theirs only while few do: a set of a thousand shards
// must not hold a thousand descriptors (EMFILE under the usual `ulimit -n`
// of 1024). Past the budget (a quarter of RLIMIT_NOFILE, at most 256) a
// mapped file closes its descriptor once mapped and copies from the map.
std::atomic<int> g_mapped_fds{0};

}  // namespace

bool take_descriptor_slot() {
  struct rlimit rl;
  rlim_t soft = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) soft = rl.rlim_cur;
  const int budget = static_cast<int>(std::min<rlim_t>(soft / 4, 256));
  int now = g_mapped_fds.load(std::memory_order_relaxed);
  while (now < budget)
    if (g_mapped_fds.compare_exchange_weak(now, now + 1, std::memory_order_relaxed)) return true;
  return false;
}

void give_descriptor_slot() {
  g_mapped_fds.fetch_sub(1, std::memory_order_relaxed);
}

namespace {

// Copies of large ranges go through pread(2) even from a mapped file: the
// kernel copies straight from the page cache, with no page faults on a
// fresh mapping (which made mapped copy-reads ~20% slower than one pread).
constexpr size_t kPreadThreshold = size_t{1} << 20;

constexpr size_t kMaxIov = IOV_MAX;

void preadv_all(int fd, const std::string &path, uint64_t offset, const Source::Piece *pieces, size_t n) {
  static thread_local uint8_t gap[Source::kMaxGap];
  iovec iov[kMaxIov];
  while (n > 0) {
    size_t k = std::min(n, kMaxIov);
    for (size_t i = 0; i < k; ++i) {
      if (!pieces[i].dst && pieces[i].len > Source::kMaxGap)
        fail(ZT_E_INTERNAL, "read_pieces: gap wider than the scratch");
      iov[i].iov_base = pieces[i].dst ? pieces[i].dst : gap;
      iov[i].iov_len = pieces[i].len;
    }
    // Short reads resume inside the iovec they stopped in.
    iovec *cur = iov;
    size_t left = k;
    while (left > 0) {
      if (cur->iov_len == 0) {  // empty blobs: nothing to read, and a read of 0 bytes would look like EOF
        ++cur;
        --left;
        continue;
      }
      ssize_t got = ::preadv(fd, cur, static_cast<int>(left), static_cast<off_t>(offset));
      if (got < 0) {
        if (errno == EINTR) continue;
        fail(ZT_E_IO, errno_text("read failed on", path) + " at offset " + std::to_string(offset));
      }
      if (got == 0) fail(ZT_E_IO, "'" + path + "' shrank while being read (offset " + std::to_string(offset) + ")");
      offset += static_cast<uint64_t>(got);
      iov_advance(cur, left, static_cast<size_t>(got));
    }
    pieces += k;
    n -= k;
  }
}

void pread_all(int fd, const std::string &path, uint64_t offset, size_t len, void *dst) {
  const Source::Piece piece{dst, len};
  preadv_all(fd, path, offset, &piece, 1);
}

// Source::likely_cached for files: up to kResidencySamples pages spread
// over the interior of [offset, offset+len) (one per 128 KiB: a small
// batch costs one call, as its read does), each asked with mincore(2),
// through the file's map when there is one, else through a one-page map
// made for the question (no byte is read, no readahead starts). One missing
// page makes the range cold. Errors answer "cached": the caller then does
// what it did before there was a probe.
constexpr uint64_t kResidencySamples = 8;
constexpr uint64_t kBytesPerSample = uint64_t{128} << 10;

bool range_resident(const uint8_t *map, int fd, uint64_t offset, uint64_t len) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (len == 0 || (!map && fd < 0)) return true;
  const uint64_t samples = std::max<uint64_t>(1, std::min(kResidencySamples, len / kBytesPerSample));
  for (uint64_t i = 0; i < samples; ++i) {
    // The middles of `samples` equal parts: inside the range (and so
    // inside the file), away from its edges.
    const uint64_t at = (offset + len / (2 * samples) * (2 * i + 1)) & ~(page - 1);
    unsigned char resident = 0;
    if (map) {
      if (::mincore(const_cast<uint8_t *>(map) + at, page, &resident) != 0) return true;
    } else {
      void *p = ::mmap(nullptr, page, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(at));
      if (p == MAP_FAILED) return true;
      const int r = ::mincore(p, page, &resident);
      ::munmap(p, page);
      if (r != 0) return true;
    }
    if (!(resident & 1)) return false;
  }
  return true;
}

// Source::populate for files: a window of the file mapped for the call,
// MADV_POPULATE_READ over it (Linux 5.14: waits until every page was read,
// with the mapping's readahead, and copies nothing), unmapped. A past end of
// file gives EFAULT, not SIGBUS, so a file that shrinks is an error here.
// Where the advice is unknown (EINVAL: older kernels) or accepted but not
// acted on (qemu-user returns 0 for it; the window's last page is then not
// resident), the window is read with pread into `scratch` instead, and
// from then on.
#if defined(__linux__) && !defined(MADV_POPULATE_READ)
#define MADV_POPULATE_READ 22
#endif
// `map`: the file's own map (populated in place: a view's later touch
// then finds its page mapped, and a touch ahead of this thread waits on the
// same pages instead of reading them a second way), or nullptr: a window
// is mapped for the call.
bool populate_file(const uint8_t *map, int fd, const std::string &path, uint64_t offset, uint64_t len,
                   std::vector<uint8_t> &scratch, std::atomic<bool> &use_pread) {
  if (len == 0) return true;
  if (!map && fd < 0) return false;
#if defined(MADV_POPULATE_READ)
  if (!use_pread.load(std::memory_order_relaxed)) {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = offset & ~(page - 1);
    const uint64_t span = len + (offset - start);
    if (span > std::numeric_limits<size_t>::max()) return false;
    void *p = map ? const_cast<uint8_t *>(map) + start
                  : ::mmap(nullptr, static_cast<size_t>(span), PROT_READ, MAP_SHARED, fd, static_cast<off_t>(start));
    if (p == MAP_FAILED) return false;
    const int r = ::madvise(p, static_cast<size_t>(span), MADV_POPULATE_READ);
    const int err = errno;
    unsigned char last = 0;
    const bool landed =
        r == 0 && ::mincore(static_cast<uint8_t *>(p) + ((span - 1) & ~(page - 1)), 1, &last) == 0 && (last & 1);
    if (!map) ::munmap(p, static_cast<size_t>(span));
    if (landed) return true;
    if (r != 0 && err != EINVAL) return false;
    use_pread.store(true, std::memory_order_relaxed);
  }
#else
  (void)use_pread;
#endif
  if (fd < 0) return false;
  constexpr size_t kScratch = size_t{4} << 20;
  if (scratch.size() < kScratch) scratch.resize(kScratch);
  try {
    for (uint64_t done = 0; done < len; done += kScratch)
      pread_all(fd, path, offset + done, static_cast<size_t>(std::min<uint64_t>(len - done, kScratch)), scratch.data());
  } catch (const Error &) {  // a read error, or the file shrank
    return false;
  }
  return true;
}

std::unique_ptr<Source> reopen_fd(int fd, const std::string &path, uint64_t size);

class MmapSource final : public Source {
 public:
  explicit MmapSource(const std::string &path) : fd_(path) { map(path); }
  MmapSource(int fd, const std::string &path) : fd_(fd, path) { map(path); }
  ~MmapSource() override {
    if (data_) ::munmap(const_cast<uint8_t *>(data_), size_);
    if (counted_) give_descriptor_slot();
  }
  void read(uint64_t offset, size_t len, void *dst) const override {
    if (len == 0) return;
    // Unmapped (too large for this address space) files keep their
    // descriptor: every read is a pread.
    if (!data_ || (len >= kPreadThreshold && fd_.get() >= 0)) {
      pread_all(fd_.get(), path_, offset, len, dst);
      return;
    }
    std::memcpy(dst, data_ + offset, len);
  }
  const uint8_t *read_meta(uint64_t offset, size_t len, std::vector<uint8_t> &scratch) const override {
    if (fd_.get() < 0) return Source::read_meta(offset, len, scratch);
    scratch.resize(len);
    pread_all(fd_.get(), path_, offset, len, scratch.data());
    return scratch.data();
  }
  // preadv rather than memcpy from the map, for the reason given at
  // kPreadThreshold: each small blob would otherwise fault its pages in.
  void read_pieces(uint64_t offset, const Piece *pieces, size_t n) const override {
    if (fd_.get() < 0) return Source::read_pieces(offset, pieces, n);
    preadv_all(fd_.get(), path_, offset, pieces, n);
  }
  void will_need(uint64_t offset, uint64_t len) const override {
    if (len < (1u << 20) || !data_) return;
    long page = ::sysconf(_SC_PAGESIZE);
    uint64_t start = offset & ~static_cast<uint64_t>(page - 1);
    ::madvise(const_cast<uint8_t *>(data_) + start, len + (offset - start), MADV_WILLNEED);
  }
  bool likely_cached(uint64_t offset, uint64_t len) const override {
    return range_resident(data_, fd_.get(), offset, len);
  }
  std::unique_ptr<Source> reopen() const override { return reopen_fd(fd_.get(), path_, size_); }
  bool populate(uint64_t offset, uint64_t len, std::vector<uint8_t> &scratch) const override {
    return populate_file(data_, fd_.get(), path_, offset, len, scratch, populate_by_pread_);
  }

 private:
  void map(const std::string &path) {
    path_ = path;
    size_ = fd_.size();
    if (size_ == 0) {
      fd_.close();  // nothing to read, ever
      return;
    }
    if (size_ > std::numeric_limits<size_t>::max()) {
      // A 32-bit process cannot map more than 4 GiB (and a cast would cut
      // the length short): every read goes through pread instead.
      unmapped_reason_ = "the file (" + std::to_string(size_) + " bytes) is larger than this " +
                         std::to_string(8 * sizeof(size_t)) + "-bit process can map; it is read with pread";
      return;
    }
    // Private and writable (copy-on-write): a caller that writes through a
    // view or a DLPack tensor (torch's in-place ops do) gets its own copy of
    // the touched pages instead of a SIGSEGV, and the file never changes.
    // Pages nobody writes are still shared with the page cache, so reads
    // cost the same as with a read-only shared map.
    // MAP_NORESERVE: a private writable mapping is otherwise charged in full
    // against the commit limit, and the kernel's default heuristic refuses
    // one larger than RAM + swap: a 100 GB model would not open at all.
    void *p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd_.get(), 0);
    if (p == MAP_FAILED && errno == ENOMEM) {
      // Strict overcommit (vm.overcommit_memory = 2) ignores MAP_NORESERVE:
      // map read-only and shared, as 1.0 did (a write through a view then
      // faults, see zt_component_view).
      p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_.get(), 0);
    }
    if (p == MAP_FAILED && errno == ENOMEM) {
      // No room in the address space (a file of a few GiB in a 32-bit
      // process): pread serves every read, views say why they cannot be.
      unmapped_reason_ = "the file (" + std::to_string(size_) +
                         " bytes) does not fit in this process's free address space (" + std::strerror(errno) +
                         "); it is read with pread";
      return;
    }
    if (p == MAP_FAILED) fail(ZT_E_IO, errno_text("cannot map", path));
    data_ = static_cast<const uint8_t *>(p);
    counted_ = take_descriptor_slot();
    if (!counted_) fd_.close();
  }

  FileDescriptor fd_;
  bool counted_ = false;  // holds one of the budget's descriptors
  mutable std::atomic<bool> populate_by_pread_{false};
};

class PreadSource final : public Source {
 public:
  explicit PreadSource(const std::string &path) : fd_(path) {
    path_ = path;
    size_ = fd_.size();
  }
  PreadSource(int fd, const std::string &path) : fd_(fd, path) {
    path_ = path;
    size_ = fd_.size();
  }
  void read(uint64_t offset, size_t len, void *dst) const override { pread_all(fd_.get(), path_, offset, len, dst); }
  void read_pieces(uint64_t offset, const Piece *pieces, size_t n) const override {
    preadv_all(fd_.get(), path_, offset, pieces, n);
  }
  void will_need(uint64_t offset, uint64_t len) const override {
    if (len >= (1u << 20))
      ::posix_fadvise(fd_.get(), static_cast<off_t>(offset), static_cast<off_t>(len), POSIX_FADV_WILLNEED);
  }
  bool likely_cached(uint64_t offset, uint64_t len) const override {
    return range_resident(nullptr, fd_.get(), offset, len);
  }
  std::unique_ptr<Source> reopen() const override { return reopen_fd(fd_.get(), path_, size_); }
  bool populate(uint64_t offset, uint64_t len, std::vector<uint8_t> &scratch) const override {
    return populate_file(nullptr, fd_.get(), path_, offset, len, scratch, populate_by_pread_);
  }

 private:
  FileDescriptor fd_;
  mutable std::atomic<bool> populate_by_pread_{false};
};

// /proc/self/fd/N opens the file the descriptor refers to anew (a new file
// description), even after its path was renamed, deleted or replaced. The
// result must be the same file (device and inode) and at least as long as
// the source; anything else gives nullptr and the caller keeps reading
// through the descriptor it has.
std::unique_ptr<Source> reopen_fd(int fd, const std::string &path, uint64_t size) {
  if (fd < 0) return nullptr;
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  const int again = ::open(proc.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (again < 0) return nullptr;
  struct stat a, b;
  if (::fstat(fd, &a) != 0 || ::fstat(again, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino ||
      !S_ISREG(b.st_mode) || static_cast<uint64_t>(b.st_size) < size) {
    ::close(again);
    return nullptr;
  }
  try {
    return std::make_unique<PreadSource>(again, path);
  } catch (const Error &) {  // its constructor closed the descriptor
    return nullptr;
  } catch (const std::bad_alloc &) {
    ::close(again);
    return nullptr;
  }
}

}  // namespace

std::unique_ptr<Source> open_mmap_source(const std::string &path) {
  return std::make_unique<MmapSource>(path);
}
std::unique_ptr<Source> open_pread_source(const std::string &path) {
  return std::make_unique<PreadSource>(path);
}
std::unique_ptr<Source> open_mmap_source(int fd, const std::string &path) {
  return platform::adopt_descriptor<MmapSource>(fd, path);
}
std::unique_ptr<Source> open_pread_source(int fd, const std::string &path) {
  return platform::adopt_descriptor<PreadSource>(fd, path);
}
int mapped_sources_holding_fds() {
  return g_mapped_fds.load(std::memory_order_relaxed);
}

}  // namespace zt
