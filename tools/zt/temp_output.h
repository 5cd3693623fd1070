// Writing a foreign-format output file atomically: a temporary file beside
// the destination (created exclusively, with the destination's mode),
// renamed over it only once complete and synced. Used by zt export.
#pragma once

#include <cstdio>
#include <string>

namespace ztcli {

// The file an output replaces: `out` with symlinks followed, so a link keeps
// pointing at the new data. Empty (after a message) if it cannot be written.
std::string export_target(const std::string &out);

// A new temporary file beside `target`, created exclusively (O_EXCL: never
// through an attacker's symlink), with the mode `target` has now, or the
// usual 0666 & ~umask for a new file. nullptr (errno set) on failure.
FILE *create_temp_beside(const std::string &target, std::string &tmp);

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
  std::string cmd_, out_, target_, tmp_;
  FILE *fp_ = nullptr;
  bool done_ = false;
};

}  // namespace ztcli
