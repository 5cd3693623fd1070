// The file a rename is about to replace, held open so that the rename only
// unlinks a name and the old file's blocks are freed later, off the writer's
// path. Freeing a large file is not cheap: ext4 returns its blocks in the
// unlink (with a discard per extent when mounted `discard`), ~0.2 ms per MiB
// here, and that used to be half of what a replacing finish waited for. The
// same reason Redis closes a rewritten AOF's predecessor in a background job.
#pragma once

#include <cstdint>
#include <string>

namespace zt {

class ReplacedFile {
 public:
  // Holds whatever regular file is at `path` now (an O_PATH reference: no
  // permission needed, nothing read). Holds nothing if there is none or it
  // cannot be held; the replacement then frees it inline, as before.
  explicit ReplacedFile(const std::string &path) noexcept;
  ~ReplacedFile();  // drops the reference inline if release() was not called
  ReplacedFile(const ReplacedFile &) = delete;
  ReplacedFile &operator=(const ReplacedFile &) = delete;

  // Drops the reference once its name is gone: on a short-lived background
  // thread named "zt-release" when the file is big enough for freeing it to
  // cost (and fewer than kMaxInFlight such threads are running), inline
  // otherwise.
  void release() noexcept;

  bool held() const { return fd_ >= 0; }
  bool released_in_background() const { return background_; }

  // Smaller files are freed inline: a thread costs more than their freeing.
  static constexpr uint64_t kBackgroundMinSize = uint64_t{16} << 20;
  // Whether a file of `size` bytes is freed on a thread, on a filesystem with
  // `free_bytes` available: not when space is short (less than twice the
  // file free), where the next write may need those blocks at once (a loop
  // replacing checkpoints on a nearly full disk must not hit ENOSPC because
  // the previous version is still being freed).
  static bool worth_deferring(uint64_t size, uint64_t free_bytes) {
    return size >= kBackgroundMinSize && free_bytes / 2 >= size;
  }
  static constexpr int kMaxInFlight = 4;
  // Releases still running on background threads (for tests).
  static int in_flight();

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t free_bytes_ = 0;  // available on its filesystem when it was held
  bool background_ = false;
};

}  // namespace zt
