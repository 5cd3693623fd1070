#include "set_output.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "platform/posix/temp_file.h"

namespace ztcli {

int SetOutput::begin(const char *cmd, const std::string &outdir, const std::vector<std::string> &names) {
  cmd_ = cmd;
  outdir_ = outdir;
  names_ = names;
  struct stat st;
  if (::stat(outdir.c_str(), &st) != 0) {
    if (::mkdir(outdir.c_str(), 0777) != 0) {
      std::fprintf(stderr, "zt %s: cannot create '%s': %s\n", cmd, outdir.c_str(), std::strerror(errno));
      return kIo;
    }
    created_outdir_ = true;
  } else if (!S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "zt %s: '%s' exists and is not a folder\n", cmd, outdir.c_str());
    return kFailure;
  }
  for (const auto &n : names) {
    if (::lstat((outdir + "/" + n).c_str(), &st) == 0) {
      std::fprintf(stderr, "zt %s: '%s/%s' already exists; nothing written (remove it or choose another output)\n", cmd,
                   outdir.c_str(), n.c_str());
      return kFailure;
    }
  }
  // The folders of earlier runs that were killed (SIGKILL) go first; a
  // live run's is locked (platform/posix/temp_file.h).
  const std::string tag = std::string(".zt-") + cmd + "-";
  zt::remove_stale_temps(outdir + "/", tag.c_str());
  std::string tmpl = zt::temp_prefix(outdir + "/", tag.c_str()) + "XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "zt %s: cannot create a temporary folder in '%s': %s\n", cmd, outdir.c_str(),
                 std::strerror(errno));
    return kIo;
  }
  tmp_ = tmpl;
  on_signal_.add(SignalCleanup::kTempFolder, tmp_);
  lock_fd_ = ::open(tmp_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ >= 0) (void)::flock(lock_fd_, LOCK_EX | LOCK_NB);
  return kOk;
}

int SetOutput::write_text(const std::string &name, const std::string &text, bool sync) {
  const std::string path = temp_path(name);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  bool ok = fd >= 0;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      ok = false;
    else
      done += static_cast<size_t>(n);
  }
  if (ok && sync && ::fsync(fd) != 0) ok = false;
  const int e = errno;
  if (fd >= 0 && ::close(fd) != 0 && ok) ok = false;
  if (!ok) {
    std::fprintf(stderr, "zt %s: cannot write '%s': %s (nothing written)\n", cmd_.c_str(), path.c_str(),
                 std::strerror(e ? e : errno));
    return kIo;
  }
  return kOk;
}

int SetOutput::commit(bool sync) {
  std::vector<std::string> moved;
  for (const auto &n : names_) {
    const std::string dst = outdir_ + "/" + n;
    struct stat st;
    std::string why;
    if (::lstat(dst.c_str(), &st) == 0)
      why = "it appeared meanwhile";
    else if (::rename(temp_path(n).c_str(), dst.c_str()) != 0)
      why = std::strerror(errno);
    if (!why.empty()) {
      for (const auto &m : moved) ::unlink((outdir_ + "/" + m).c_str());
      std::fprintf(stderr, "zt %s: cannot move '%s' into place: %s (nothing written)\n", cmd_.c_str(), dst.c_str(),
                   why.c_str());
      return kIo;
    }
    moved.push_back(n);
  }
  committed_ = true;
  if (sync) {
    const int fd = ::open(outdir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }
  return kOk;
}

SetOutput::~SetOutput() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
  if (!tmp_.empty()) {
    if (!committed_)
      for (const auto &n : names_) ::unlink(temp_path(n).c_str());
    ::rmdir(tmp_.c_str());
  }
  if (created_outdir_ && !committed_) ::rmdir(outdir_.c_str());  // fails, harmlessly, unless empty
}

}  // namespace ztcli
