// Writing a foreign-format output file atomically: a temporary file beside
// the destination (with the destination's mode), renamed over it only once
// complete and synced. The temporary is unnamed (O_TMPFILE) where the
// filesystem allows, else "<target>.zt-export-<pid>-XXXXXX", created
// exclusively (never through an attacker's symlink) and locked; a signal
// removes it (signal_cleanup.h), the next export to the same file removes
// those of killed exports (platform/posix/temp_file.h). Used by zt export.
#pragma once

#include <cstdio>
#include <string>

#include "signal_cleanup.h"

namespace ztcli {

// The file an output replaces: `out` with symlinks followed, so a link keeps
// pointing at the new data. Empty (after a message) if it cannot be written.
std::string export_target(const std::string &out);

// A temporary output that becomes `out` on commit() and is removed
// otherwise: a failed export never leaves a partial file.
class TempOutput {
 public:
  // False (after a message prefixed with `cmd`) if no temporary file could
  // be made.
  bool open(const char *cmd, const std::string &out);
  FILE *fp() const { return fp_; }
  // Flushes, fsyncs, closes and renames into place; false after a message.
  bool commit();
  ~TempOutput();

 private:
  std::string cmd_, out_, target_, tmp_;  // tmp_: "" while unnamed
  FILE *fp_ = nullptr;
  SignalCleanup on_signal_;
  bool done_ = false;
};

}  // namespace ztcli
