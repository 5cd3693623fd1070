// Helpers of the Win32 implementations in src/platform/win32/ (Windows
// builds only; the zt tool's Windows files use them too). Code above the
// platform seam includes the seam's headers (platform/file.h, ...), not this.
// Paths come in as UTF-8, as on Linux, and are turned into UTF-16 for the
// wide (-W) API, so a file named in any script opens and writes. Open files
// are C runtime descriptors (_open_osfhandle) over handles opened here, so
// the descriptor-based interfaces of Source and Sink stay the same.
#pragma once

#ifdef _WIN32

#include <cstddef>
#include <cstdint>
#include <string>

#include "internal/internal_api.h"

namespace zt {
namespace win32 {

// UTF-8 to UTF-16. Throws zt::Error (ZT_E_INVALID_ARG) naming the path when
// it is not valid UTF-8 (MB_ERR_INVALID_CHARS: nothing is guessed).
ZT_INTERNAL std::wstring wide_path(const std::string &utf8);

// A GetLastError() code in words, with the code; a sharing violation or a
// lock says that another program has the file open.
std::string error_text(unsigned long code);

// Opens an existing regular file for reading, shared for reading, writing
// and deletion (a writer may replace it while it is read, as on POSIX).
// Returns a C runtime descriptor and its size; throws zt::Error (ZT_E_IO)
// naming the file (as `label`, "'<path>'" when empty) when it cannot be
// opened or is not a regular file.
int open_read(const std::string &path, uint64_t *size, const std::string &label = std::string());

// The size of an open file; throws zt::Error (ZT_E_IO) if it is not a
// regular file.
uint64_t file_size(int fd, const std::string &path);

// The Win32 handle of a C runtime descriptor (owned by the descriptor).
void *handle_of(int fd);

// Reads exactly len bytes at a 64-bit offset (ReadFile with an OVERLAPPED
// offset: no shared file position, so threads may read one file at once).
// Throws zt::Error (ZT_E_IO) naming the file (`what`: "'<path>'") and
// offset, also when the file ends first.
void pread_all(int fd, const std::string &what, uint64_t offset, void *dst, size_t len);

// Writes all of [data, data+len) at the file position. `what` names the
// file in messages ("'<path>'").
void write_all(int fd, const void *data, size_t len, const std::string &what);

// FlushFileBuffers: the file's data and metadata on the device.
ZT_INTERNAL void flush_to_disk(int fd, const std::string &what);

// Creates "<target><tag><pid>-XXXXXX" beside target exclusively
// (CREATE_NEW), read-write, shared for reading and deletion; returns its
// descriptor and sets name. Throws zt::Error (ZT_E_IO) naming the folder.
// `flags`: more FILE_ATTRIBUTE_* / FILE_FLAG_* (FILE_FLAG_DELETE_ON_CLOSE
// for a scratch file).
ZT_INTERNAL int create_temp(const std::string &target, const char *tag, std::string &name, unsigned long flags = 0);

// UTF-16 to UTF-8 (a path the system gave).
std::string narrow(const std::wstring &wide);

// Renames temp over target in one step (MoveFileExW with
// MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH). When target is open
// in a program that does not share it for deletion (or is read-only), the
// target stays as it was and zt::Error (ZT_E_IO) says so and names it; the
// caller removes temp.
ZT_INTERNAL void replace_file(const std::string &temp, const std::string &target);

// Deletes a file, best effort (DeleteFileW).
ZT_INTERNAL void remove_file(const std::string &path) noexcept;

// Whether a and b name the same existing file (volume serial number and
// file index: Windows' stat has no inode, st_ino is always 0). False when
// either cannot be opened.
bool same_file(const std::string &a, const std::string &b);

// What is at path: 0 nothing, 1 a regular file, 2 a directory, 3 something
// else (a device). Throws zt::Error (ZT_E_IO) when it cannot be asked.
int path_kind(const std::string &path);

}  // namespace win32
}  // namespace zt

#endif  // _WIN32
