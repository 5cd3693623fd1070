// FileSink over the platform's new-file calls (platform/new_file.h): the
// same on every platform. Buffering is in file_sink_buffer.cc.
#include "container/sink.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "platform/file.h"
#include "platform/new_file.h"
#include "platform/process.h"
#include "platform/replace_target.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {

FileSink::FileSink(const std::string &path) : owner_pid_(current_process_id()) {
  if (path.empty()) fail(ZT_E_INVALID_ARG, "output path is empty");
  const ReplaceTarget target = resolve_replace_target(path);
  path_ = target.path;
  fd_ = platform::create_temp_beside(target, path, kTempTag, temp_path_);
  buffer_.reset(new uint8_t[kBufferSize]);
}

FileSink::~FileSink() {
  abandon();
}

void FileSink::abandon() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) platform::close_file(fd_);  // an anonymous temporary is freed with its last descriptor
  fd_ = -1;
  if (!temp_path_.empty() && owner_pid_ == current_process_id()) platform::remove_temp(temp_path_);
}

bool FileSink::written_for_check(Written &out) {
  flush();
  out.path = temp_path_;
  out.label = temp_path_.empty() ? "the new file for '" + path_ + "'" : temp_path_;
  out.fd = fd_;
  return true;
}

void FileSink::write_through(const void *data, size_t len) {
  // A large blob goes out in kWritebackChunk pieces, each handed to
  // writeback as soon as it is written (see start_writeback).
  const auto *p = static_cast<const uint8_t *>(data);
  do {
    const size_t n = std::min(len, kWritebackChunk);
    platform::write_two(fd_, buffer_.get(), used_, p, n, temp_label());
    written_ += used_ + n;
    used_ = 0;
    p += n;
    len -= n;
    start_writeback();
  } while (len > 0);
}

// Starts writeback of each kWritebackChunk written, without waiting for
// it. Left to itself, ext4 writes the whole file back inside the rename
// that replaces the destination (auto_da_alloc); started while the rest is
// still being copied, most of that I/O is done by then, and an fsync (sync=1)
// has little left to wait for. 64 MiB measured best on this kind of machine
// (write rows of bench/, sync=0, against the write() loop: mixed 1.1-1.4 with
// 16 MiB or 32 MiB pieces, 2.0-2.3 with 64 MiB, 1.7-2.0 with 128 MiB; large
// 1.1-1.5, 2.1-2.6 and 0.8-1.1). Fewer calls block less often on a full
// device queue; much bigger pieces leave too much for the rename.
void FileSink::start_writeback() {
  if (written_ - started_ < kWritebackChunk) return;
  platform::start_writeback(fd_, started_, written_ - started_);
  started_ = written_;
}

std::string FileSink::temp_label() const {
  const std::string dest = "the temporary file of '" + path_ + "'";
  return temp_path_.empty() ? dest + " (unnamed, O_TMPFILE)" : "'" + temp_path_ + "' (" + dest + ")";
}

void FileSink::commit(bool sync) {
  if (done_) fail(ZT_E_MISUSE, "file already finished");
  flush();
  if (sync) platform::flush_to_disk(fd_, temp_label());
  platform::name_temp(fd_, path_, kTempTag, temp_path_);
  const int fd = fd_;
  fd_ = -1;
  if (!platform::close_file(fd)) fail(ZT_E_IO, "close of " + temp_label() + " failed: " + std::strerror(errno));
  // On failure the destructor's abandon() removes the temporary.
  platform::replace_file(temp_path_, path_, temp_label(), &replaced_in_background_);
  done_ = true;
  if (sync) platform::sync_folder_of(path_);
}

}  // namespace zt
