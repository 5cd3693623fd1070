// The platform seam for files (src/platform/posix/file.cc,
// src/platform/win32/file.cc): opening an input that must be a regular file,
// reading and writing at an offset, scratch files. Open files are descriptors
// on every platform (on Windows, C runtime descriptors over handles the
// library opened from UTF-8 paths), so the code above the seam is the same.
// Errors are zt::Error (ZT_E_IO) naming the file; nothing here knows the
// format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace zt {
namespace platform {

// An open regular file, read-only. Opened without blocking (a FIFO, a
// device or a folder is refused at once, with what it is, never waited on)
// or adopted from a caller that opened it (zt_open_set, beneath the index's
// folder). `label` names the file in messages ("'<path>'" unless given).
class InputFile {
 public:
  explicit InputFile(const std::string &path, const std::string &label = std::string());
  // Owns fd from the call on: closed here also when it throws (not a
  // regular file, cannot be asked).
  InputFile(int fd, const std::string &path);
  ~InputFile() { close(); }
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  int get() const { return fd_; }
  uint64_t size() const { return size_; }
  void close() noexcept;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The size of a whole-file view of `path`, whose size is `size` now:
// ZT_E_CHANGED when it is not `expected_size` (FileView::kAnySize: any),
// ZT_E_LIMIT when this process cannot address it. Platform-neutral
// (file_view_size.cc): both FileViews check the same way.
size_t checked_view_size(const std::string &path, uint64_t size, uint64_t expected_size);

// A whole regular file as one read-only buffer, for parsers that read a
// buffer: a private read-only map (POSIX: pages of the page cache, not
// counted as the process's data), or on Windows the file read whole into
// memory (a file mapped there could not be replaced while it is parsed).
// Throws zt::Error: ZT_E_IO (InputFile's, or the map or read failed),
// ZT_E_LIMIT (larger than this process can address), ZT_E_CHANGED (not
// `expected_size` bytes, when given: replaced since it was opened),
// ZT_E_NOMEM.
class FileView {
 public:
  static constexpr uint64_t kAnySize = UINT64_MAX;
  explicit FileView(const std::string &path, uint64_t expected_size = kAnySize);
  ~FileView();
  FileView(const FileView &) = delete;
  FileView &operator=(const FileView &) = delete;
  // Never null (an empty file: a static byte).
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  void *map_ = nullptr;              // POSIX
  std::unique_ptr<uint8_t[]> copy_;  // Windows
};

// What read_small_file found.
enum class SmallFile { kRead, kMissing, kTooLarge };
// The whole text of a small file (a configuration file), read safely
// whatever the path names: InputFile's rules (a FIFO or device refused
// without blocking), at most `limit` bytes (one byte past it is read: the
// file may grow). kMissing when there is nothing at `path`. Throws
// zt::Error (ZT_E_IO) naming the file as `label`.
SmallFile read_small_file(const std::string &path, uint64_t limit, const std::string &label, std::string &text);

// fopen of a UTF-8 path (Windows: _wfopen of its UTF-16 form); nullptr
// with errno set on failure.
std::FILE *open_stdio(const std::string &path, const char *mode);
// The stream's data on the device (fsync, _commit); false with errno set.
bool sync_stdio(std::FILE *f) noexcept;

// Reads exactly len bytes at offset, with no shared file position (threads
// may read one file at once). `what` names the file in messages ("'<path>'");
// a file that ends first "shrank while being read".
void read_at(int fd, const std::string &what, uint64_t offset, void *dst, size_t len);
// Writes all of [src, src+len) at offset.
void write_at(int fd, const std::string &what, uint64_t offset, const void *src, size_t len);
// Copies up to len bytes from in_fd at in_at to out_fd at out_at inside
// the kernel (Linux: copy_file_range, reflinks where the filesystem can);
// returns how many were copied from the start: 0 where there is no such
// call, or it stopped (another filesystem, an old kernel). The caller
// copies the rest by hand.
uint64_t copy_in_kernel(int in_fd, uint64_t in_at, int out_fd, uint64_t out_at, uint64_t len) noexcept;
// Writes [a, a+an) and then [b, b+bn) contiguously at offset: one
// gathered write where the platform has one (POSIX pwritev).
void write_two_at(int fd, const std::string &what, uint64_t offset, const void *a, size_t an, const void *b, size_t bn);
// The file's size and the filesystem's preferred I/O block (4096 where it
// does not say); false when the file cannot be asked.
bool size_and_block(int fd, uint64_t *size, uint64_t *block) noexcept;
// Sets the file's size (cuts it, or extends it with a hole).
void truncate_file(int fd, uint64_t size, const std::string &what);
// Closes a descriptor; false when the close reported an error (a failed
// write-back on NFS, say). The descriptor is gone either way.
bool close_file(int fd) noexcept;
// A second descriptor for the same open file (not inherited by children);
// -1 with errno set on failure.
int duplicate_file(int fd) noexcept;
// Whether a and b name the same existing file (device and inode; volume and
// file index on Windows, whose stat has no inode). False when either
// cannot be asked.
bool same_file(const std::string &a, const std::string &b) noexcept;
// A read-write file in `dir` that no one else can open and that is gone
// once closed (O_TMPFILE, or a name removed at once; FILE_FLAG_DELETE_ON_CLOSE):
// the v2 writer's spool. Throws naming the folder.
int open_scratch_file(const std::string &dir, const std::string &what);
// Where scratch files go: $TMPDIR or /tmp; GetTempPathW on Windows.
std::string temp_folder();

}  // namespace platform
}  // namespace zt
