// The POSIX side of tools/zt/platform.h.
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli.h"
#include "platform.h"

namespace ztcli {

bool file_id(const std::string &path, FileId &id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  id.links = static_cast<uint64_t>(st.st_nlink);
  return true;
}

void prepare_process() {}

int limit_memory(uint64_t limit) {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && limit > rl.rlim_max)
    limit = rl.rlim_max;  // never above what the system already allows
  rl.rlim_cur = static_cast<rlim_t>(limit);
  if (::setrlimit(RLIMIT_DATA, &rl) != 0) {
    std::fprintf(stderr, "zt: cannot set --max-memory: %s\n", std::strerror(errno));
    return kIo;
  }
  read_options().max_memory = limit;
  // A private mapping of an input counts as data: read with pread.
  read_options().pread = true;
  return kOk;
}

bool can_replace_open_file() {
  return true;
}

}  // namespace ztcli
