// Writing a sharded set (shards plus index) so that it appears whole or not
// at all: every file is written in a temporary folder inside OUTDIR and
// renamed into place at commit, the index last; names already in OUTDIR
// are refused before anything is written, so nothing is ever replaced.
// The temporary folder is ".zt-CMD-<pid>-XXXXXX", locked while in use: a
// signal removes it (signal_cleanup.h), and the next run of the command
// into the same OUTDIR removes those of runs that were killed.
// Used by zt split and by zt convert of a sharded safetensors checkpoint.
#pragma once

#include <string>
#include <vector>

#include "signal_cleanup.h"

namespace ztcli {

class SetOutput {
 public:
  // Creates OUTDIR if missing (not its parents; removed again if nothing
  // is committed), refuses if any of `names`
  // (in commit order: the index last) exists there, makes the temporary
  // folder. Returns kOk or an exit code after a message prefixed "zt CMD".
  int begin(const char *cmd, const std::string &outdir, const std::vector<std::string> &names);
  // Where to write `name` until commit.
  std::string temp_path(const std::string &name) const { return tmp_ + "/" + name; }
  // Writes a small text file (the index) into the temporary folder.
  int write_text(const std::string &name, const std::string &text, bool sync);
  // Moves every name into place; a failure takes back what was moved.
  int commit(bool sync);
  ~SetOutput();

 private:
  std::string cmd_, outdir_, tmp_;
  std::vector<std::string> names_;
  bool committed_ = false;
  bool created_outdir_ = false;  // removed again (if still empty) when nothing is committed
  int lock_fd_ = -1;             // the temporary folder, locked: it is not stale while we run
  SignalCleanup on_signal_;      // a signal removes the temporary folder
};

}  // namespace ztcli
