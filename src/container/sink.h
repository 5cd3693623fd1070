// Where a new file's bytes go: a temporary file beside the destination,
// renamed into place on commit() and removed if abandoned, so a reader never
// sees a torn file under the destination name. Small writes are gathered in
// a buffer; large ones go straight from the caller's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zt {

class FileSink {
 public:
  explicit FileSink(const std::string &path);
  ~FileSink();  // abandons (removes the temporary) unless committed
  FileSink(const FileSink &) = delete;
  FileSink &operator=(const FileSink &) = delete;

  void write(const void *data, size_t len);
  void write_zeros(size_t len);
  uint64_t position() const { return position_; }
  // Flushes, optionally fsyncs, renames over the destination.
  void commit(bool sync);
  void abandon() noexcept;
  const std::string &path() const { return path_; }
  const std::string &temp_path() const { return temp_path_; }

 private:
  void flush();
  void write_fd(const void *data, size_t len);

  std::string path_, temp_path_;
  int fd_ = -1;
  uint64_t position_ = 0;
  std::vector<uint8_t> buffer_;
  bool done_ = false;
};

}  // namespace zt
