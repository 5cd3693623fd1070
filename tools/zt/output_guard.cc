#include "output_guard.h"

#include <sys/stat.h>

#include <cstdio>

#include "cli.h"

namespace ztcli {

int refuse_output_is_input(const char *cmd, const std::string &out, const std::vector<std::string> &inputs) {
  struct stat o;
  if (::stat(out.c_str(), &o) != 0) return kOk;  // a new file cannot be an input
  for (const auto &in : inputs) {
    struct stat i;
    if (::stat(in.c_str(), &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino) {
      std::fprintf(stderr,
                   "zt %s: the output '%s' is the input '%s' (the same file); writing it would replace the "
                   "input: choose another output path (nothing written)\n",
                   cmd, out.c_str(), in.c_str());
      return kUsage;
    }
  }
  return kOk;
}

int refuse_hard_linked(const char *cmd, const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || st.st_nlink <= 1) return kOk;
  std::fprintf(stderr,
               "zt %s: '%s' has %ju hard links; rewriting it would give only this name the new content while "
               "the other names keep the old one. Write the result elsewhere (zt merge ... -o NEW.zt) and "
               "replace the links yourself (nothing changed)\n",
               cmd, path.c_str(), static_cast<uintmax_t>(st.st_nlink));
  return kFailure;
}

}  // namespace ztcli
