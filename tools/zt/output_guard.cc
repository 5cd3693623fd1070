#include "output_guard.h"

#include <cstdint>
#include <cstdio>

#include "cli.h"
#include "platform.h"
#include "terminal_text.h"

namespace ztcli {
int refuse_output_is_input(const char *cmd, const std::string &out, const std::vector<std::string> &inputs) {
  FileId o;
  if (is_url(out) || !file_id(out, o)) return kOk;  // a new file cannot be an input
  for (const auto &in : inputs) {
    FileId i;
    if (is_url(in)) continue;  // read remotely: never the local output
    if (file_id(in, i) && i.dev == o.dev && i.ino == o.ino) {
      std::fprintf(stderr,
                   "zt %s: the output '%s' is the input '%s' (the same file); writing it would replace the "
                   "input: choose another output path (nothing written)\n",
                   cmd, shown(out).c_str(), shown(in).c_str());
      return kUsage;
    }
  }
  return kOk;
}

int refuse_hard_linked(const char *cmd, const std::string &path) {
  FileId id;
  if (!file_id(path, id) || id.links <= 1) return kOk;
  std::fprintf(stderr,
               "zt %s: '%s' has %ju hard links; rewriting it would give only this name the new content while "
               "the other names keep the old one. Write the result elsewhere (zt merge ... -o NEW.zt) and "
               "replace the links yourself (nothing changed)\n",
               cmd, path.c_str(), static_cast<uintmax_t>(id.links));
  return kFailure;
}

}  // namespace ztcli
