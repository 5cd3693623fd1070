// The platform seam for new files that appear whole or not at all
// (src/platform/posix/new_file.cc, src/platform/win32/new_file.cc): a
// temporary beside the destination, written, flushed, and renamed over it.
// FileSink (container/sink.h) is the platform-neutral writer over these
// calls; the rules are in docs/writing-rules.md.
//
// POSIX: the temporary has no name at all where the filesystem has
// O_TMPFILE (a killed writer leaves nothing), else it is
// "<destination><tag><pid>-XXXXXX", locked (flock), and the next writer in
// that folder removes those of writers that are gone
// (platform/posix/temp_file.h). The replaced file is freed off the writer's
// path (platform/replaced_file.h). Windows: always a named temporary
// (CREATE_NEW), renamed with MoveFileExW (MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH); a killed writer leaves it behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "platform/replace_target.h"

namespace zt {
namespace platform {

// Creates the temporary for `target` (resolve_replace_target) in its
// folder, read-write, with the permissions the new file will have. Returns
// its descriptor; `temp_path` is its name, "" while it has none (O_TMPFILE).
// Throws zt::Error (ZT_E_IO) naming `path` (the destination as given).
int create_temp_beside(const ReplaceTarget &target, const std::string &path, const char *tag, std::string &temp_path);

// Writes [a, a+na) then [b, b+nb), all of both (one writev on POSIX).
// `what` names the file in messages.
void write_two(int fd, const void *a, size_t na, const void *b, size_t nb, const std::string &what);

// Starts writing [offset, offset+len) back to the device without waiting
// (Linux: sync_file_range), so that the rename has less left to do.
// Nothing where there is no such call.
void start_writeback(int fd, uint64_t offset, uint64_t len) noexcept;

// The file's data and metadata on the device (fsync, FlushFileBuffers).
void flush_to_disk(int fd, const std::string &what);

// Gives a temporary without a name ("" temp_path) a fresh one
// "<target><tag><pid>-XXXXXX", for the rename. Nothing if it has one.
// Throws zt::Error (ZT_E_IO); temp_path stays "".
void name_temp(int fd, const std::string &target, const char *tag, std::string &temp_path);

// Renames temp over target in one step. `what` names the temporary in
// messages. On failure target is as it was, zt::Error (ZT_E_IO) says so, and
// the caller removes temp. *in_background: the file that was replaced is
// being freed on a background thread (POSIX, platform/replaced_file.h).
void replace_file(const std::string &temp, const std::string &target, const std::string &what, bool *in_background);

// Makes the rename itself durable (fsync of the folder); best effort.
void sync_folder_of(const std::string &target) noexcept;

// Removes a temporary, best effort.
void remove_temp(const std::string &temp_path) noexcept;

}  // namespace platform
}  // namespace zt
