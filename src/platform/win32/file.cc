// The Windows side of platform/file.h, over the helpers of win32.h.
#include "platform/file.h"

#include <io.h>
#include <windows.h>

#include <algorithm>
#include <limits>
#include <new>

#include "platform/win32/win32.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace platform {

InputFile::InputFile(const std::string &path, const std::string &label) {
  fd_ = win32::open_read(path, &size_, label);
}

InputFile::InputFile(int fd, const std::string &path) : fd_(fd) {
  try {
    size_ = win32::file_size(fd_, path);
  } catch (...) {
    close();  // no destructor runs for a constructor that throws
    throw;
  }
}

void InputFile::close() noexcept {
  if (fd_ >= 0) _close(fd_);
  fd_ = -1;
}

FileView::FileView(const std::string &path, uint64_t expected_size) {
  static const uint8_t kEmpty = 0;
  data_ = &kEmpty;
  InputFile file(path);
  size_ = checked_view_size(path, file.size(), expected_size);
  if (size_ == 0) return;
  // Read whole rather than mapped: Windows cannot replace a mapped file.
  copy_.reset(new (std::nothrow) uint8_t[size_]);
  if (!copy_) fail(ZT_E_NOMEM, "'" + path + "': cannot allocate " + std::to_string(size_) + " bytes to read it");
  read_at(file.get(), "'" + path + "'", 0, copy_.get(), size_);
  data_ = copy_.get();
}

FileView::~FileView() = default;

SmallFile read_small_file(const std::string &path, uint64_t limit, const std::string &label, std::string &text) {
  if (win32::path_kind(path) == 0) return SmallFile::kMissing;
  InputFile file(path, label);
  if (file.size() > limit) return SmallFile::kTooLarge;
  text.assign(static_cast<size_t>(file.size()), '\0');
  if (!text.empty()) read_at(file.get(), label, 0, &text[0], text.size());
  return SmallFile::kRead;
}

void read_at(int fd, const std::string &what, uint64_t offset, void *dst, size_t len) {
  win32::pread_all(fd, what, offset, dst, len);
}

void write_at(int fd, const std::string &what, uint64_t offset, const void *src, size_t len) {
  HANDLE h = static_cast<HANDLE>(win32::handle_of(fd));
  const auto *p = static_cast<const uint8_t *>(src);
  while (len > 0) {
    const DWORD want = static_cast<DWORD>(std::min<size_t>(len, DWORD{1} << 30));
    OVERLAPPED ov = {};
    ov.Offset = static_cast<DWORD>(offset);
    ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
    DWORD put = 0;
    if (!WriteFile(h, p, want, &put, &ov) || put == 0)
      fail(ZT_E_IO, "write to " + what + " at offset " + std::to_string(offset) +
                        " failed: " + win32::error_text(GetLastError()));
    p += put;
    offset += put;
    len -= put;
  }
}

void write_two_at(int fd, const std::string &what, uint64_t offset, const void *a, size_t an, const void *b,
                  size_t bn) {
  write_at(fd, what, offset, a, an);
  write_at(fd, what, offset + an, b, bn);
}

bool size_and_block(int fd, uint64_t *size, uint64_t *block) noexcept {
  LARGE_INTEGER n;
  if (!GetFileSizeEx(static_cast<HANDLE>(win32::handle_of(fd)), &n)) return false;
  *size = static_cast<uint64_t>(n.QuadPart);
  *block = 4096;
  return true;
}

uint64_t copy_in_kernel(int, uint64_t, int, uint64_t, uint64_t) noexcept {
  return 0;
}

void truncate_file(int fd, uint64_t size, const std::string &what) {
  HANDLE h = static_cast<HANDLE>(win32::handle_of(fd));
  FILE_END_OF_FILE_INFO eof;
  eof.EndOfFile.QuadPart = static_cast<LONGLONG>(size);
  if (!SetFileInformationByHandle(h, FileEndOfFileInfo, &eof, sizeof eof))
    fail(ZT_E_IO,
         "cannot set the size of " + what + " to " + std::to_string(size) + ": " + win32::error_text(GetLastError()));
}

std::FILE *open_stdio(const std::string &path, const char *mode) {
  const std::wstring wmode(mode, mode + std::char_traits<char>::length(mode));
  return ::_wfopen(win32::wide_path(path).c_str(), wmode.c_str());
}

bool sync_stdio(std::FILE *f) noexcept {
  return ::_commit(::_fileno(f)) == 0;
}

bool close_file(int fd) noexcept {
  return _close(fd) == 0;
}

int duplicate_file(int fd) noexcept {
  return _dup(fd);  // the C runtime duplicates the handle (not inheritable)
}

bool same_file(const std::string &a, const std::string &b) noexcept {
  try {
    return win32::same_file(a, b);
  } catch (...) {  // a path that is not UTF-8
    return false;
  }
}

int open_scratch_file(const std::string &dir, const std::string &what) {
  std::string name;
  try {
    return win32::create_temp(dir + "\\zt-v2-spool", "-", name, FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE);
  } catch (const Error &e) {
    fail(ZT_E_IO, "cannot create " + what + " in '" + dir + "': " + e.what());
  }
}

std::string temp_folder() {
  wchar_t buf[MAX_PATH + 2];
  const DWORD n = GetTempPathW(MAX_PATH + 2, buf);
  if (n == 0 || n > MAX_PATH + 1) return ".";
  std::wstring w(buf, n);
  while (!w.empty() && (w.back() == L'\\' || w.back() == L'/')) w.pop_back();
  return win32::narrow(w);
}

}  // namespace platform
}  // namespace zt
