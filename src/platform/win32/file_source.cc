// The Windows file sources of platform/file_source.h, over the Win32 API
// (src/platform/win32/win32.h). A mapped file is a copy-on-write view
// (FILE_MAP_COPY, as MAP_PRIVATE on POSIX: a caller writing through a view
// gets its own pages and the file never changes); reads that do not come
// from the map are ReadFile calls at 64-bit OVERLAPPED offsets.
#include "platform/file_source.h"

#include <windows.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <new>

#include "container/source.h"
#include "platform/win32/win32.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace {

// An open regular file (platform/file.h).
using FileDescriptor = platform::InputFile;

// Handles are not the scarce resource descriptors are on POSIX: a mapped
// file keeps its handle for the large reads below. Counted all the same,
// for the same test hook.
std::atomic<int> g_mapped_fds{0};

// As on POSIX: large copies are reads of the file, not copies out of a
// fresh map (which would fault every page in).
constexpr size_t kReadThreshold = size_t{1} << 20;

class MmapSource final : public Source {
 public:
  explicit MmapSource(const std::string &path) : fd_(path) { map(path); }
  MmapSource(int fd, const std::string &path) : fd_(fd, path) { map(path); }
  ~MmapSource() override {
    if (data_) UnmapViewOfFile(data_);
    if (mapping_) CloseHandle(mapping_);
    if (counted_) g_mapped_fds.fetch_sub(1, std::memory_order_relaxed);
  }
  void read(uint64_t offset, size_t len, void *dst) const override {
    if (len == 0) return;
    if (!data_ || len >= kReadThreshold) {
      platform::read_at(fd_.get(), "'" + path_ + "'", offset, dst, len);
      return;
    }
    std::memcpy(dst, data_ + offset, len);
  }
  void will_need(uint64_t offset, uint64_t len) const override {
    if (len < (1u << 20) || !data_) return;
    // PrefetchVirtualMemory (Windows 8+), looked up at run time: a hint only.
    using Prefetch = BOOL(WINAPI *)(HANDLE, ULONG_PTR, PWIN32_MEMORY_RANGE_ENTRY, ULONG);
    static const Prefetch prefetch = reinterpret_cast<Prefetch>(
        reinterpret_cast<void (*)()>(GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "PrefetchVirtualMemory")));
    if (!prefetch) return;
    WIN32_MEMORY_RANGE_ENTRY range{const_cast<uint8_t *>(data_) + offset, static_cast<SIZE_T>(len)};
    (void)prefetch(GetCurrentProcess(), 1, &range, 0);
  }

 private:
  void map(const std::string &path) {
    path_ = path;
    size_ = fd_.size();
    if (size_ == 0) {
      fd_.close();  // nothing to read, ever (and an empty file cannot be mapped)
      return;
    }
    if (size_ > std::numeric_limits<size_t>::max()) {
      unmapped_reason_ = "the file (" + std::to_string(size_) + " bytes) is larger than this " +
                         std::to_string(8 * sizeof(size_t)) +
                         "-bit process can map; it is read with pread (ReadFile at 64-bit offsets)";
      return;
    }
    // PAGE_WRITECOPY + FILE_MAP_COPY: private, copy-on-write pages.
    mapping_ =
        CreateFileMappingW(static_cast<HANDLE>(win32::handle_of(fd_.get())), nullptr, PAGE_WRITECOPY, 0, 0, nullptr);
    if (!mapping_) fail(ZT_E_IO, "cannot map '" + path + "': " + win32::error_text(GetLastError()));
    void *p = MapViewOfFile(mapping_, FILE_MAP_COPY, 0, 0, 0);
    if (!p) {
      const DWORD e = GetLastError();
      CloseHandle(mapping_);
      mapping_ = nullptr;
      if (e == ERROR_NOT_ENOUGH_MEMORY) {
        // No room in the address space (a 32-bit process): read by ReadFile.
        unmapped_reason_ =
            "the file (" + std::to_string(size_) +
            " bytes) does not fit in this process's free address space; it is read with pread (ReadFile at "
            "64-bit offsets)";
        return;
      }
      fail(ZT_E_IO, "cannot map '" + path + "': " + win32::error_text(e));
    }
    data_ = static_cast<const uint8_t *>(p);
    g_mapped_fds.fetch_add(1, std::memory_order_relaxed);
    counted_ = true;
  }

  FileDescriptor fd_;
  HANDLE mapping_ = nullptr;
  bool counted_ = false;
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
  void read(uint64_t offset, size_t len, void *dst) const override {
    if (len) platform::read_at(fd_.get(), "'" + path_ + "'", offset, dst, len);
  }

 private:
  FileDescriptor fd_;
};

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
// No prefetch thread on Windows (no reopen()): nothing takes these.
bool take_descriptor_slot() {
  return false;
}
void give_descriptor_slot() {}
int mapped_sources_holding_fds() {
  return g_mapped_fds.load(std::memory_order_relaxed);
}

}  // namespace zt
