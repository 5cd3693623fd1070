// The v2 writer's layout file (v2_writer.h): bytes placed at increasing
// offsets, gathered into few large writes. Between two placed ranges, a gap
// that holds a whole filesystem block is left unwritten (a hole: reads as
// zeros, takes no disk); a smaller gap lies inside blocks that the writes
// around it allocate anyway, so its zeros go out with them in the same
// write. Blobs packed at 4 KiB thus cost what a contiguous file costs (one
// system call per buffer, large page-cache folios), and canonical 64 KiB
// placement costs one write per blob and no byte of padding.
//
// The file is grown ahead of the writes (ftruncate, a hole) so a write
// rarely extends it (on ext4 every extending write dirties the inode);
// set_size() states the final size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace zt::v2 {

// Whole reads and writes at an offset, retrying short ones; ZT_E_IO naming
// `what` on failure.
void pread_exact(int fd, void *p, size_t n, uint64_t at, const char *what);
void pwrite_exact(int fd, const void *p, size_t n, uint64_t at, const char *what);

class BlobFile {
 public:
  BlobFile() = default;
  BlobFile(const BlobFile &) = delete;
  BlobFile &operator=(const BlobFile &) = delete;

  void attach(int fd);  // not owned
  int fd() const { return fd_; }

  // n bytes at `at`: at or after the end of the previous write (else the
  // gathered bytes go first and this one is written on its own).
  void write(uint64_t at, const void *p, size_t n, const char *what);
  // Hands every gathered byte to the kernel.
  void flush();
  void read(uint64_t at, void *p, size_t n);
  // Drops everything from `size` on (a streamed duplicate taken back).
  void cut(uint64_t size);
  // The file ends at `size` (the footer's end).
  void set_size(uint64_t size);

  // Gathered below this, written from the caller's memory at or above it.
  static constexpr size_t kDirect = size_t{128} << 10;
  static constexpr size_t kBuffer = size_t{1} << 20;

 private:
  void write_run(const void *p, size_t n, const char *what);
  void reserve(uint64_t end);

  int fd_ = -1;
  uint64_t block_ = 4096;           // the filesystem's allocation unit (st_blksize, 4 KiB .. 64 KiB)
  std::unique_ptr<uint8_t[]> buf_;  // not value-initialized: only the part in use is touched
  size_t used_ = 0;
  uint64_t run_at_ = 0;    // the file offset of buf_[0]; run_at_ + used_ is where the run ends
  uint64_t reserved_ = 0;  // the file's size as last set here (0: not yet known)
};

}  // namespace zt::v2
