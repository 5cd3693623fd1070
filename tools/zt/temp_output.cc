#include "temp_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "platform/posix/temp_file.h"

namespace ztcli {

std::string export_target(const std::string &out) {
  struct stat st;
  if (::lstat(out.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return out;
  char *real = ::realpath(out.c_str(), nullptr);
  if (!real) {
    std::fprintf(stderr, "zt export: '%s' is a symlink whose target cannot be resolved: %s\n", out.c_str(),
                 std::strerror(errno));
    return std::string();
  }
  std::string r = real;
  std::free(real);
  return r;
}

namespace {

constexpr const char *kExportTag = ".zt-export-";

// The target's mode for an existing file (the temporary is created 0600 and
// given it); a new one is created 0666 and the kernel applies the umask
// (platform/posix/temp_file.h: reading the umask would change it for a moment).
bool target_mode(const std::string &target, mode_t &mode) {
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) return false;
  mode = st.st_mode & 07777;
  return true;
}

}  // namespace

bool TempOutput::open(const char *cmd, const std::string &out) {
  cmd_ = cmd;
  out_ = out;
  target_ = export_target(out);
  if (target_.empty()) return false;
  on_signal_.add(SignalCleanup::kOutputFile, target_);
  mode_t mode = 0;
  const bool replaces = target_mode(target_, mode);
  int fd = zt::open_anonymous_temp(zt::temp_dir_of(target_), replaces ? 0600 : 0666);
  if (fd < 0) {  // named temporaries: those of killed exports go first
    zt::remove_stale_temps(target_, kExportTag);
    fd = zt::create_named_temp(target_, kExportTag, tmp_, replaces ? 0600 : 0666);
  }
  if (fd >= 0) {
    if (replaces) ::fchmod(fd, mode);
    fp_ = ::fdopen(fd, "wb");
    if (!fp_) ::close(fd);
  }
  if (!fp_) {
    std::fprintf(stderr, "zt %s: cannot create a temporary file beside '%s': %s\n", cmd, target_.c_str(),
                 std::strerror(errno));
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    return false;
  }
  return true;
}

bool TempOutput::commit() {
  FILE *fp = fp_;
  fp_ = nullptr;
  bool written = std::fflush(fp) == 0 && ::fsync(fileno(fp)) == 0;
  // An unnamed temporary gets its name now, for the rename.
  if (written && tmp_.empty() && !zt::link_anonymous_temp(fileno(fp), target_, kExportTag, tmp_)) written = false;
  const int e = errno;
  if (std::fclose(fp) != 0 || !written) {
    std::fprintf(stderr, "zt %s: cannot write '%s': %s\n", cmd_.c_str(), out_.c_str(),
                 std::strerror(written ? errno : e));
    return false;
  }
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    std::fprintf(stderr, "zt %s: cannot rename onto '%s': %s\n", cmd_.c_str(), out_.c_str(), std::strerror(errno));
    return false;
  }
  done_ = true;
  return true;
}

TempOutput::~TempOutput() {
  if (fp_) std::fclose(fp_);
  if (!done_ && !tmp_.empty()) std::remove(tmp_.c_str());
}

}  // namespace ztcli
