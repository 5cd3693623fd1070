#include "temp_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

FILE *create_temp_beside(const std::string &target, std::string &tmp) {
  std::string tmpl = target + ".zt-export-XXXXXX";
  int fd = ::mkostemp(&tmpl[0], O_CLOEXEC);
  if (fd < 0) return nullptr;
  tmp = tmpl;
  struct stat st;
  if (::stat(target.c_str(), &st) == 0) {
    ::fchmod(fd, st.st_mode & 07777);
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  FILE *fp = ::fdopen(fd, "wb");
  if (!fp) {
    ::close(fd);
    ::unlink(tmp.c_str());
  }
  return fp;
}

bool TempOutput::open(const char *cmd, const std::string &out) {
  cmd_ = cmd;
  out_ = out;
  target_ = export_target(out);
  if (target_.empty()) return false;
  fp_ = create_temp_beside(target_, tmp_);
  if (!fp_) {
    std::fprintf(stderr, "zt %s: cannot create a temporary file beside '%s': %s\n", cmd, target_.c_str(),
                 std::strerror(errno));
    return false;
  }
  return true;
}

bool TempOutput::commit() {
  FILE *fp = fp_;
  fp_ = nullptr;
  const bool written = std::fflush(fp) == 0 && ::fsync(fileno(fp)) == 0;
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
