// The Windows counterpart of set_output.cc (Meson picks one or the other).
// A set is written into a temporary folder that POSIX locks (flock on the
// folder) so that a later run can tell a live run's folder from a killed
// one's, and every shard is then renamed into place. That protocol has no
// Windows port yet, so zt split and zt convert of a sharded checkpoint
// refuse on Windows, before anything is created (docs/cross.md, "Windows").
#include <cstdio>

#include "cli.h"
#include "set_output.h"

namespace ztcli {

int SetOutput::begin(const char *cmd, const std::string &outdir, const std::vector<std::string> &) {
  std::fprintf(stderr,
               "zt %s: writing a set folder ('%s') is not supported on Windows yet (docs/cross.md, \"Windows\"); "
               "nothing written\n",
               cmd, outdir.c_str());
  return kFailure;
}

int SetOutput::write_text(const std::string &, const std::string &, bool) {
  return kFailure;
}

int SetOutput::commit(bool) {
  return kFailure;
}

SetOutput::~SetOutput() = default;

}  // namespace ztcli
