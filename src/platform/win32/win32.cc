#include "platform/win32/win32.h"

#include <fcntl.h>
#include <io.h>
#include <process.h>
#include <windows.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace win32 {

std::wstring wide_path(const std::string &utf8) {
  if (utf8.empty()) return std::wstring();
  if (utf8.size() > static_cast<size_t>(INT32_MAX)) fail(ZT_E_INVALID_ARG, "path too long");
  const int n =
      MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  if (n <= 0) fail(ZT_E_INVALID_ARG, "path '" + utf8 + "' is not valid UTF-8 (paths are UTF-8 on every platform)");
  std::wstring w(static_cast<size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8.data(), static_cast<int>(utf8.size()), &w[0], n);
  return w;
}

std::string narrow(const std::wstring &wide) {
  if (wide.empty()) return std::string();
  const int n =
      WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), nullptr, 0, nullptr, nullptr);
  std::string s(static_cast<size_t>(std::max(n, 0)), '\0');
  if (n > 0) WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), &s[0], n, nullptr, nullptr);
  return s;
}

std::string error_text(unsigned long code) {
  std::string hint;
  if (code == ERROR_SHARING_VIOLATION || code == ERROR_LOCK_VIOLATION)
    hint = "; another program has the file open without sharing it: close it there and try again";
  wchar_t *msg = nullptr;
  const DWORD len = FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code,
      MAKELANGID(LANG_NEUTRAL, SUBLANG_DEFAULT), reinterpret_cast<wchar_t *>(&msg), 0, nullptr);
  std::string text;
  if (len && msg) {
    const int n = WideCharToMultiByte(CP_UTF8, 0, msg, static_cast<int>(len), nullptr, 0, nullptr, nullptr);
    text.resize(static_cast<size_t>(std::max(n, 0)));
    if (n > 0) WideCharToMultiByte(CP_UTF8, 0, msg, static_cast<int>(len), &text[0], n, nullptr, nullptr);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '.'))
      text.pop_back();
  }
  if (msg) LocalFree(msg);
  if (text.empty()) text = "Windows error";
  return text + " (error " + std::to_string(code) + ")" + hint;
}

namespace {

// A handle handed to the C runtime, which owns it from then on.
int to_descriptor(HANDLE h, int flags, const std::string &path) {
  const int fd = _open_osfhandle(reinterpret_cast<intptr_t>(h), flags | _O_BINARY | _O_NOINHERIT);
  if (fd < 0) {
    CloseHandle(h);
    fail(ZT_E_IO, "'" + path + "': no C runtime descriptor left for it");
  }
  return fd;
}

}  // namespace

void *handle_of(int fd) {
  return reinterpret_cast<void *>(_get_osfhandle(fd));
}

uint64_t file_size(int fd, const std::string &path) {
  HANDLE h = static_cast<HANDLE>(handle_of(fd));
  if (GetFileType(h) != FILE_TYPE_DISK) fail(ZT_E_IO, "'" + path + "' is not a regular file");
  BY_HANDLE_FILE_INFORMATION info;
  if (!GetFileInformationByHandle(h, &info)) fail(ZT_E_IO, "cannot stat '" + path + "': " + error_text(GetLastError()));
  if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
    fail(ZT_E_IO, "'" + path + "' is a directory, not a regular file");
  return (static_cast<uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow;
}

int open_read(const std::string &path, uint64_t *size, const std::string &label) {
  const std::string shown = label.empty() ? "'" + path + "'" : label;
  const std::wstring w = wide_path(path);
  // FILE_FLAG_BACKUP_SEMANTICS lets a directory open too, so that it is
  // refused by name below rather than with "access denied".
  HANDLE h = CreateFileW(w.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                         OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) fail(ZT_E_IO, "cannot open " + shown + ": " + error_text(GetLastError()));
  const int fd = to_descriptor(h, _O_RDONLY, path);
  try {
    *size = file_size(fd, path);
  } catch (...) {
    _close(fd);
    throw;
  }
  return fd;
}

void pread_all(int fd, const std::string &what, uint64_t offset, void *dst, size_t len) {
  HANDLE h = static_cast<HANDLE>(handle_of(fd));
  auto *p = static_cast<uint8_t *>(dst);
  while (len > 0) {
    const DWORD want = static_cast<DWORD>(std::min<size_t>(len, DWORD{1} << 30));
    OVERLAPPED ov = {};
    ov.Offset = static_cast<DWORD>(offset);
    ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
    DWORD got = 0;
    if (!ReadFile(h, p, want, &got, &ov)) {
      const DWORD e = GetLastError();
      if (e != ERROR_HANDLE_EOF)
        fail(ZT_E_IO, "read failed on " + what + " at offset " + std::to_string(offset) + ": " + error_text(e));
      got = 0;
    }
    if (got == 0) fail(ZT_E_IO, what + " shrank while being read (offset " + std::to_string(offset) + ")");
    p += got;
    offset += got;
    len -= got;
  }
}

void write_all(int fd, const void *data, size_t len, const std::string &what) {
  HANDLE h = static_cast<HANDLE>(handle_of(fd));
  const auto *p = static_cast<const uint8_t *>(data);
  while (len > 0) {
    const DWORD want = static_cast<DWORD>(std::min<size_t>(len, DWORD{1} << 30));
    DWORD put = 0;
    if (!WriteFile(h, p, want, &put, nullptr) || put == 0)
      fail(ZT_E_IO, "write to " + what + " failed: " + error_text(GetLastError()));
    p += put;
    len -= put;
  }
}

void flush_to_disk(int fd, const std::string &what) {
  if (!FlushFileBuffers(static_cast<HANDLE>(handle_of(fd))))
    fail(ZT_E_IO, "flush of " + what + " to disk failed: " + error_text(GetLastError()));
}

int create_temp(const std::string &target, const char *tag, std::string &name, unsigned long flags) {
  static std::atomic<unsigned> counter{0};
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  const std::string prefix = target + tag + std::to_string(static_cast<long>(_getpid())) + "-";
  for (int attempt = 0; attempt < 100; ++attempt) {
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    uint64_t x =
        static_cast<uint64_t>(t.QuadPart) * 0x9E3779B97F4A7C15ull ^ (counter.fetch_add(1) + 1) * 0xBF58476D1CE4E5B9ull;
    std::string candidate = prefix;
    for (int i = 0; i < 6; ++i, x /= 36) candidate += digits[x % 36];
    HANDLE h =
        CreateFileW(wide_path(candidate).c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE,
                    nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL | flags, nullptr);
    if (h != INVALID_HANDLE_VALUE) {
      name = candidate;
      return to_descriptor(h, _O_RDWR, candidate);
    }
    const DWORD e = GetLastError();
    if (e != ERROR_FILE_EXISTS && e != ERROR_ALREADY_EXISTS)
      fail(ZT_E_IO, "cannot create a temporary file beside '" + target + "': " + error_text(e));
  }
  fail(ZT_E_IO, "cannot create a temporary file beside '" + target + "': 100 names taken");
}

void replace_file(const std::string &temp, const std::string &target) {
  const std::wstring from = wide_path(temp), to = wide_path(target);
  if (MoveFileExW(from.c_str(), to.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return;
  const DWORD e = GetLastError();
  std::string why = error_text(e);
  if (e == ERROR_ACCESS_DENIED)
    why += "; it may be read-only, or open (or mapped) in a program that does not let others replace it";
  fail(ZT_E_IO,
       "cannot replace '" + target + "' with the new file '" + temp + "': " + why + "; '" + target + "' is unchanged");
}

void remove_file(const std::string &path) noexcept {
  try {
    DeleteFileW(wide_path(path).c_str());
  } catch (...) {
  }
}

namespace {

bool file_index(const std::string &path, BY_HANDLE_FILE_INFORMATION &info) {
  HANDLE h = CreateFileW(wide_path(path).c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                         OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return false;
  const bool ok = GetFileInformationByHandle(h, &info) != 0;
  CloseHandle(h);
  return ok;
}

}  // namespace

bool same_file(const std::string &a, const std::string &b) {
  BY_HANDLE_FILE_INFORMATION x, y;
  return file_index(a, x) && file_index(b, y) && x.dwVolumeSerialNumber == y.dwVolumeSerialNumber &&
         x.nFileIndexHigh == y.nFileIndexHigh && x.nFileIndexLow == y.nFileIndexLow;
}

int path_kind(const std::string &path) {
  WIN32_FILE_ATTRIBUTE_DATA a;
  if (!GetFileAttributesExW(wide_path(path).c_str(), GetFileExInfoStandard, &a)) {
    const DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return 0;
    fail(ZT_E_IO, "cannot stat '" + path + "': " + error_text(e));
  }
  if (a.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) return 2;
  if (a.dwFileAttributes & FILE_ATTRIBUTE_DEVICE) return 3;
  return 1;
}

}  // namespace win32
}  // namespace zt
