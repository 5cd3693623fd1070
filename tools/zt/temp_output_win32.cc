// The Windows counterpart of temp_output.cc (Meson picks one or the other):
// the temporary is always named, "<out>.zt-export-<pid>-XXXXXX", created
// exclusively (CREATE_NEW) by the library's platform layer
// (src/platform/win32/win32.h), flushed with FlushFileBuffers and renamed over
// the output with MoveFileExW(MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH). A file another program holds open is left as it
// was, with a message naming it. No O_TMPFILE, no mode to copy (a new file
// gets its folder's ACL), symlinks not followed (as the library's writer).
#include <fcntl.h>
#include <io.h>

#include <cstdio>

#include "platform/win32/win32.h"
#include "temp_output.h"
#include "util/error.h"

namespace ztcli {

std::string export_target(const std::string &out) {
  return out;
}

bool TempOutput::open(const char *cmd, const std::string &out) {
  cmd_ = cmd;
  out_ = out;
  target_ = out;
  on_signal_.add(SignalCleanup::kOutputFile, target_);
  try {
    const int fd = zt::win32::create_temp(target_, ".zt-export-", tmp_);
    fp_ = ::_fdopen(fd, "wb");
    if (!fp_) ::_close(fd);
  } catch (const zt::Error &e) {
    std::fprintf(stderr, "zt %s: %s\n", cmd, e.what());
  }
  if (!fp_) {
    if (!tmp_.empty()) zt::win32::remove_file(tmp_);
    tmp_.clear();
    std::fprintf(stderr, "zt %s: cannot create a temporary file beside '%s'\n", cmd, target_.c_str());
    return false;
  }
  return true;
}

bool TempOutput::commit() {
  FILE *fp = fp_;
  fp_ = nullptr;
  try {
    if (std::fflush(fp) != 0) throw zt::Error(ZT_E_IO, "cannot write '" + out_ + "'");
    zt::win32::flush_to_disk(::_fileno(fp), "'" + tmp_ + "'");
    if (std::fclose(fp) != 0) {
      fp = nullptr;
      throw zt::Error(ZT_E_IO, "cannot write '" + out_ + "'");
    }
    fp = nullptr;
    zt::win32::replace_file(tmp_, target_);
  } catch (const zt::Error &e) {
    if (fp) std::fclose(fp);
    std::fprintf(stderr, "zt %s: %s\n", cmd_.c_str(), e.what());
    return false;
  }
  done_ = true;
  return true;
}

TempOutput::~TempOutput() {
  if (fp_) std::fclose(fp_);
  if (!done_ && !tmp_.empty()) zt::win32::remove_file(tmp_);
}

}  // namespace ztcli
