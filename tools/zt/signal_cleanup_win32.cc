// The Windows counterpart of signal_cleanup.cc (Meson picks one or the
// other). Windows has no signals to catch but console control events:
// Ctrl-C, Ctrl-Break and the console being closed. Their handler runs in a
// thread of its own (not an interrupt), so it may lock and allocate: it
// removes this process's temporaries of each registered output
// ("<target>.zt-tmp-<pid>-*", "<target>.zt-export-<pid>-*", found with
// FindFirstFileW) and the temporary folders registered, then lets the
// default handler end the process. TerminateProcess (taskkill /F) is not
// seen, as SIGKILL is not on POSIX.
#include <process.h>
#include <windows.h>

#include <mutex>
#include <string>
#include <vector>

#include "platform/win32/win32.h"
#include "signal_cleanup.h"

namespace ztcli {
namespace {

struct Entry {
  int id;
  SignalCleanup::Kind kind;
  std::wstring dir;        // the folder of the output (or the temporary folder)
  std::wstring prefix[2];  // names to remove in dir (kOutputFile)
};

std::mutex g_mu;
std::vector<Entry> g_entries;
int g_next_id = 0;

void remove_matching(const std::wstring &dir, const std::wstring &pattern) {
  WIN32_FIND_DATAW fd;
  HANDLE h = FindFirstFileW((dir + L"\\" + pattern).c_str(), &fd);
  if (h == INVALID_HANDLE_VALUE) return;
  do {
    const std::wstring name = fd.cFileName;
    if (name == L"." || name == L"..") continue;
    DeleteFileW((dir + L"\\" + name).c_str());
  } while (FindNextFileW(h, &fd));
  FindClose(h);
}

BOOL WINAPI on_console_event(DWORD event) {
  if (event != CTRL_C_EVENT && event != CTRL_BREAK_EVENT && event != CTRL_CLOSE_EVENT) return FALSE;
  std::lock_guard<std::mutex> lock(g_mu);
  for (const Entry &e : g_entries) {
    if (e.kind == SignalCleanup::kTempFolder) {
      remove_matching(e.dir, L"*");
      RemoveDirectoryW(e.dir.c_str());
    } else {
      remove_matching(e.dir, e.prefix[0] + L"*");
      remove_matching(e.dir, e.prefix[1] + L"*");
    }
  }
  return FALSE;  // the next handler (the default one) ends the process
}

}  // namespace

void install_signal_cleanup() {
  SetConsoleCtrlHandler(on_console_event, TRUE);
}

void SignalCleanup::add(Kind kind, const std::string &target) {
  if (slot_ >= 0) return;
  Entry e;
  e.kind = kind;
  try {
    if (kind == kTempFolder) {
      e.dir = zt::win32::wide_path(target);
    } else {
      const size_t slash = target.find_last_of("/\\");
      const std::string dir = slash == std::string::npos ? "." : target.substr(0, slash == 0 ? 1 : slash);
      const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
      const std::string pid = std::to_string(static_cast<long>(_getpid())) + "-";
      e.dir = zt::win32::wide_path(dir);
      e.prefix[0] = zt::win32::wide_path(base + ".zt-tmp-" + pid);  // the library's writer
      e.prefix[1] = zt::win32::wide_path(base + ".zt-export-" + pid);
    }
  } catch (...) {
    return;  // not UTF-8: the writer refuses the path itself
  }
  std::lock_guard<std::mutex> lock(g_mu);
  e.id = g_next_id++;
  slot_ = e.id;
  g_entries.push_back(std::move(e));
}

SignalCleanup::~SignalCleanup() {
  if (slot_ < 0) return;
  std::lock_guard<std::mutex> lock(g_mu);
  for (size_t i = 0; i < g_entries.size(); ++i)
    if (g_entries[i].id == slot_) {
      g_entries.erase(g_entries.begin() + static_cast<long>(i));
      break;
    }
}

// The library's Windows writer replaces the link itself, not its target
// (docs/cross.md, "Windows"): the output path is the file replaced.
std::string replaced_target(const std::string &out) {
  return out;
}

}  // namespace ztcli
