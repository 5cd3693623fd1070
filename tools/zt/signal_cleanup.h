// What a Ctrl-C, SIGTERM, SIGHUP or SIGQUIT must not leave behind: the
// temporaries of the outputs a command is writing. Outputs register here;
// the handler (async-signal-safe: raw system calls only) removes this
// process's temporaries of each, "<target>.zt-tmp-<pid>-*" and
// "<target>.zt-export-<pid>-*" (platform/posix/temp_file.h), and the temporary folders
// of set outputs, then ends the process with the same signal, as if it had
// not been caught. Where the filesystem has O_TMPFILE no temporary has a
// name to remove; SIGKILL is covered by the next writer's stale cleanup.
#pragma once

#include <string>

namespace ztcli {

// Installs the handlers (signals the shell left ignored stay ignored).
void install_signal_cleanup();

// Registers one output for the handler while it lives. `target` is the
// file that will be replaced (symlinks followed), or, for a folder, the
// temporary folder to remove whole (its files are regular, none nested).
class SignalCleanup {
 public:
  enum Kind { kOutputFile, kTempFolder };
  SignalCleanup() = default;
  SignalCleanup(Kind kind, const std::string &target) { add(kind, target); }
  ~SignalCleanup();
  SignalCleanup(const SignalCleanup &) = delete;
  SignalCleanup &operator=(const SignalCleanup &) = delete;
  void add(Kind kind, const std::string &target);

 private:
  int slot_ = -1;
};

// The file an output path replaces: symlinks followed (as the library's
// writer does), `out` itself otherwise or when it cannot be resolved.
std::string replaced_target(const std::string &out);

}  // namespace ztcli
