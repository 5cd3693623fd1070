// Shared plumbing of the `zt` tool: argument parsing helpers, error
// reporting, and the command table. Each command lives in its own file and
// is written against the public API: the C ABI, with the C++ wrapper
// ztensor.hpp owning the handles (ztensor::File, Set, Writer).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ztensor.h"
#include "ztensor.hpp"
#include "ztensor_io.h"
#include "ztensor_set.h"

namespace ztcli {

// Exit codes (documented in `zt --help` and README.md).
enum Exit { kOk = 0, kFailure = 1, kUsage = 2, kIo = 3 };

struct Command {
  const char *name;
  const char *summary;
  const char *usage;  // full help text for `zt COMMAND --help`
  int (*run)(const std::vector<std::string> &args);
};

// All commands, defined in commands.cc.
const std::vector<Command> &commands();

// Prints "zt: <what>: <status text>: <detail>" to stderr and returns kFailure
// (kIo for ZT_E_IO).
int report(const std::string &what, zt_status st);

// Prints a usage error and returns kUsage.
int usage_error(const std::string &cmd, const std::string &msg);

// True if args contains -h/--help.
bool wants_help(const std::vector<std::string> &args);

// Simple option parsing: flags and "--opt VALUE" / "--opt=VALUE".
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // name → value ("" for flags)
  bool has(const std::string &name) const;
  std::string get(const std::string &name, const std::string &def = "") const;
};
// `with_value` lists options that take a value. Unknown options → error.
bool parse_args(const std::vector<std::string> &in, const std::vector<std::string> &flags,
                const std::vector<std::string> &with_value, Args &out, std::string &err);

std::string shape_string(const uint64_t *shape, size_t ndim);
std::string human_bytes(uint64_t n);

// Describes an object / one of its components (zeroed if the call fails).
zt_object_info object_info(const zt_object *o);
zt_component_info component_info(const zt_object *o, size_t index);
// The strings of an object and a component with their lengths (C ABI 1.3):
// a format, role or type name may hold NULs, and a C-string comparison or
// print would stop at the first ("dense\0x" is not "dense").
inline std::string_view format_of(const zt_object_info &i) {
  return i.format ? std::string_view(i.format, i.format_len) : std::string_view();
}
inline std::string_view role_of(const zt_component_info &c) {
  return c.role ? std::string_view(c.role, c.role_len) : std::string_view();
}
inline std::string_view dtype_name_of(const zt_component_info &c) {
  return c.dtype_name ? std::string_view(c.dtype_name, c.dtype_name_len) : std::string_view();
}
inline std::string_view logical_type_of(const zt_component_info &c) {  // empty when there is none
  return c.logical_type ? std::string_view(c.logical_type, c.logical_type_len) : std::string_view();
}
inline std::string_view encoding_name_of(const zt_component_info &c) {
  return c.encoding_name ? std::string_view(c.encoding_name, c.encoding_name_len) : std::string_view();
}
// Stored (on-disk) bytes of all of an object's components.
uint64_t stored_bytes(const zt_object *o);

// Options given before the command (zt [--pread] [--max-decoded-size N] CMD)
// that apply to every .zt file a command reads.
struct ReadOptions {
  bool pread = false;              // read with pread(2): a file truncated underfoot is an error, not SIGBUS
  bool pread_given = false;        // --pread itself (--max-memory also sets pread)
  uint64_t max_decoded_size = 0;   // per component; 0 = the library's default
  std::string bearer_token;        // for http(s) inputs: --bearer-token-file or $ZT_BEARER_TOKEN
  bool verify = false;             // verify-on-read: digests checked as components are read (--verify)
  uint64_t max_memory = 0;         // --max-memory (RLIMIT_DATA); 0 = none, for messages
  uint64_t max_total_decoded = 0;  // --max-total-decoded: per whole-file operation; 0 = none
  // Remote inputs (http(s)://, s3://): a stalled or crawling server ends the
  // command in about 40 s by default (4 attempts of 10 s below 1 KiB/s).
  uint32_t timeout_ms = 60000;         // --timeout: one request, whole transfer
  uint32_t retries = 3;                // --retries
  uint32_t low_speed_bytes = 1024;     // --low-speed BYTES/s (0 = off) ...
  uint32_t low_speed_time_ms = 10000;  // ... for --low-speed-time
  uint64_t deadline_ms = 0;            // --deadline: all requests of an input; 0 = none
};
// zt_url_options for a remote input, from read_options().
void fill_url_options(zt_url_options &u);
ReadOptions &read_options();
// Opens a .zt input with read_options(); on failure prints "what: ..." and
// returns its exit code (kOk on success).
// An input starting with http:// or https:// is opened with zt_open_url.
int open_input(const std::string &path, ztensor::File &out, const std::string &what = "");
// (--max-total-decoded is counted per command by a DecodeBudget,
// decode_budget.h.)
// Refuses, for a command that reads its input itself with the library's
// defaults (migrate, compress, decompress), the read options it cannot
// honour (--pread, --max-decoded-size given explicitly): kUsage after a
// message, else kOk.
int refuse_read_options(const char *cmd);
// True for an http://, https:// or s3:// input.
bool is_url(const std::string &path);
// How a path or URL is shown in every message, summary line and JSON field:
// URLs without user:pass@ or query (src/util/redact_url.h, the rule the
// library's messages follow too); local paths as they are.
std::string display_path(const std::string &path);
// For a path a command only handles locally (an output, a file rewritten in
// place, an input read by zt_migrate or the converters): a URL is refused
// before anything quotes it or makes a file from it (kUsage after a
// message naming it redacted), else kOk. `role`: "input", "output", "file".
int refuse_url(const char *cmd, const char *role, const std::string &path);

// Streams one component (zt_component_stream_*) to fn(data, len) in pieces
// of at most 8 MiB: memory stays bounded whatever the component's size.
// fn returns false to stop (a write failed; it has reported why): the
// result is then kIo. A library failure is reported as "what: ..." and
// returns its exit code.
int stream_component(const zt_object *o, size_t index, const std::string &what,
                     bool (*fn)(void *user, const void *data, size_t len), void *user);

class Progress;
// The stream_component sink of the exporters: appends each piece to an open
// file and advances a progress line. `failed` tells a write error (report
// it as such) from a library one.
struct FileStreamSink {
  FILE *fp;
  Progress *progress;
  bool failed = false;
  static bool write(void *user, const void *data, size_t len);
};

// True for a path naming a set index rather than a .zt file (it ends in
// ".json").
bool is_set_index(const std::string &path);
// Opens a set index (a sharded checkpoint, docs/sharding.md) with
// read_options(), as open_input does for a file.
int open_set_input(const std::string &path, ztensor::Set &out, const std::string &what = "");
// The paths of a set's shards (the index's folder joined with each location).
std::vector<std::string> shard_paths(const std::string &index, const zt_set *set);

// Parses a size with an optional unit: "5GB" (powers of 1000: B, KB, MB,
// GB, TB), "512MiB" (powers of 1024: KiB, MiB, GiB, TiB), "1000"; case-
// insensitive, optional space before the unit. False on anything else, a
// zero size, or one beyond 2^64.
bool parse_byte_size(const std::string &s, uint64_t &out);

// Parses "none|crc32c|sha256" (returns false on anything else).
bool parse_digest(const std::string &s, uint32_t &alg);
// The format generation of a writing command (docs/v2.md, Writing):
// `--format 1.2|2` (1 also means 1.2; `--to` is migrate's spelling) and
// `--no-canonical` (v2 only). Their names, to add to parse_args' lists.
extern const char *const kFormatOption;
extern const char *const kNoCanonicalFlag;
// format: 1 (spec 1.2, the default) or 2; canonical: 1 unless
// --no-canonical. False, with err set, on a bad value or --no-canonical
// without --format 2.
bool parse_format(const Args &a, uint32_t &format, uint32_t &canonical, std::string &err,
                  const char *option = "--format");
// A zstd level for --zstd (-131072..22); false if s is not one.
bool parse_zstd_level(const std::string &s, int32_t &level);

}  // namespace ztcli
