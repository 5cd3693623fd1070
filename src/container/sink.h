// Where a new file's bytes go: a temporary file beside the destination,
// renamed into place on commit() and removed if abandoned, so a reader never
// sees a torn file under the destination name. The temporary has no name at
// all where the filesystem has O_TMPFILE (platform/posix/temp_file.h): a killed
// writer leaves nothing behind. Small writes (padding, tiny
// blobs, the footer) are gathered in a small buffer; a large one goes
// straight from the caller's memory, in the same writev as what is gathered
// before it, so a blob costs one system call and no copy of its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace zt {

// Where a writer's bytes go: a file (FileSink), memory or a caller's
// callback (memory_sink.h). Writes are sequential; position() is the
// number of bytes written so far.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(const void *data, size_t len) = 0;
  virtual void write_zeros(size_t len) = 0;
  uint64_t position() const { return position_; }
  // Makes the bytes final (the file renamed into place, the buffer ready to
  // take, the callback's last bytes sent). `sync` matters to files only.
  virtual void commit(bool sync) = 0;
  // Drops what was written, where that is possible (not for a callback).
  virtual void abandon() noexcept = 0;

  // The bytes written so far, readable by an independent reader before
  // commit(): a file's temporary path, or a memory sink's buffer. A
  // callback's bytes are gone: none.
  struct Written {
    std::string path;   // "" for memory and for an unnamed (O_TMPFILE) file
    std::string label;  // what to call it in messages
    int fd = -1;        // a file's descriptor (read-write), still the sink's
    const uint8_t *data = nullptr;
    size_t size = 0;
  };
  virtual bool written_for_check(Written &out) {
    (void)out;
    return false;
  }

 protected:
  uint64_t position_ = 0;
};

class FileSink final : public Sink {
 public:
  explicit FileSink(const std::string &path);
  ~FileSink();  // abandons (removes the temporary) unless committed
  FileSink(const FileSink &) = delete;
  FileSink &operator=(const FileSink &) = delete;

  void write(const void *data, size_t len) override;
  void write_zeros(size_t len) override;
  // Flushes, optionally fsyncs, renames over the destination.
  void commit(bool sync) override;
  void abandon() noexcept override;
  bool written_for_check(Written &out) override;
  // For a writer that places its bytes itself (pwrite, copy_file_range: the
  // v2 writer): the temporary's descriptor, with everything buffered
  // flushed. Such a writer does not call write(); commit() works as ever.
  int positional_fd() {
    flush();
    return fd_;
  }
  const std::string &path() const { return path_; }
  // "" while the file has no name (O_TMPFILE): it gets one only in commit().
  const std::string &temp_path() const { return temp_path_; }
  // Temporaries are "<destination>.zt-tmp-<pid>-XXXXXX" (platform/posix/temp_file.h).
  static constexpr const char *kTempTag = ".zt-tmp-";
  // After commit: the replaced file is being freed on a background thread.
  bool replaced_in_background() const { return replaced_in_background_; }

  // Below this a write is copied into the buffer (a copy is cheaper than a
  // system call); at or above it, it is written from the caller's memory.
  static constexpr size_t kDirectThreshold = size_t{16} << 10;
  static constexpr size_t kBufferSize = size_t{64} << 10;

 private:
  void flush();
  // Writes the gathered bytes, then len bytes at data, in one writev (per
  // kWritebackChunk).
  void write_through(const void *data, size_t len);
  void start_writeback();
  // The temporary as messages name it: always with the destination, since
  // an O_TMPFILE temporary has no name of its own until commit().
  std::string temp_label() const;

  std::string path_, temp_path_;
  int fd_ = -1;
  // Not value-initialized: only the part in use is ever touched, and fresh
  // pages are costly to touch on some machines.
  std::unique_ptr<uint8_t[]> buffer_;
  size_t used_ = 0;
  uint64_t written_ = 0;  // bytes handed to the kernel
  uint64_t started_ = 0;  // bytes whose writeback was started
  bool replaced_in_background_ = false;
  static constexpr size_t kWritebackChunk = size_t{64} << 20;
  bool done_ = false;
  // A forked child that drops a writer it inherited must not remove the
  // parent's named temporary (the parent's writer would then fail at
  // commit): it only closes its copy of the descriptor.
  unsigned long owner_pid_;
};

}  // namespace zt
