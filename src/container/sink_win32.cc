// Windows counterpart of sink.cc. The new file is a named temporary beside
// the destination ("<destination>.zt-tmp-<pid>-XXXXXX", created with
// CREATE_NEW), renamed over it on commit with MoveFileExW
// (MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) after
// FlushFileBuffers when sync is asked. If the destination is open in a
// program that does not let it be replaced, the rename fails, the error
// names the file, the destination keeps its old bytes and the temporary is
// removed. There is no O_TMPFILE on Windows, and FILE_FLAG_DELETE_ON_CLOSE
// cannot be undone for a rename: a process killed while writing leaves its
// temporary behind (docs/cross.md, "Windows").
#include <io.h>

#include <algorithm>
#include <cstring>

#include "container/replace_target.h"
#include "container/sink.h"
#include "platform/win32.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {

FileSink::FileSink(const std::string &path) {
  if (path.empty()) fail(ZT_E_INVALID_ARG, "output path is empty");
  const ReplaceTarget target = resolve_replace_target(path);
  path_ = target.path;
  fd_ = win32::create_temp(path_, kTempTag, temp_path_);
  buffer_.reset(new uint8_t[kBufferSize]);
}

FileSink::~FileSink() {
  abandon();
}

void FileSink::abandon() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) _close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) win32::remove_file(temp_path_);
}

bool FileSink::written_for_check(Written &out) {
  flush();
  out.path = temp_path_;
  out.label = temp_path_;
  out.fd = fd_;
  return true;
}

void FileSink::write_through(const void *data, size_t len) {
  if (used_) win32::write_all(fd_, buffer_.get(), used_, temp_path_);
  if (len) win32::write_all(fd_, data, len, temp_path_);
  written_ += used_ + len;
  used_ = 0;
}

void FileSink::start_writeback() {
  started_ = written_;
}

void FileSink::commit(bool sync) {
  if (done_) fail(ZT_E_MISUSE, "file already finished");
  flush();
  if (sync) win32::flush_to_disk(fd_, temp_path_);
  const int fd = fd_;
  fd_ = -1;
  if (_close(fd) != 0) fail(ZT_E_IO, "close of '" + temp_path_ + "' failed");
  // On failure the destructor's abandon() removes the temporary.
  win32::replace_file(temp_path_, path_);
  done_ = true;
}

}  // namespace zt
