// zt — inspect, check, convert and maintain zTensor files.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "cli.h"
#include "platform.h"
#include "signal_cleanup.h"

using namespace ztcli;

static void print_help() {
  std::printf("zt %s — inspect, check, convert and maintain zTensor (.zt) files\n\n", zt_version_string());
  std::printf(
      "usage: zt [--pread] [--max-decoded-size BYTES] [--max-total-decoded BYTES] [--max-memory BYTES]\n"
      "          [--bearer-token-file FILE] [--timeout T] [--retries N] [--low-speed BYTES]\n"
      "          [--low-speed-time T] [--deadline T] COMMAND [ARGS...]\n\ncommands:\n");
  for (const auto &c : commands()) std::printf("  %-11s %s\n", c.name, c.summary);
  std::printf(
      "\n'zt COMMAND --help' describes a command.\n\n"
      "options for every .zt file a command reads (info, ls, verify, cat, export,\n"
      "append, remove, merge), given before the command (migrate, compress and\n"
      "decompress refuse --pread and --max-decoded-size):\n"
      "  --pread                    read with pread(2) instead of a memory map: a file\n"
      "                             truncated while it is read is an I/O error, not SIGBUS\n"
      "  --max-decoded-size BYTES   refuse a component that decodes to more than BYTES\n"
      "                             (default 64 GiB; suffixes K, M, G, T in powers of 1024)\n"
      "  --max-total-decoded BYTES  refuse, before decoding anything, a verify, migrate,\n"
      "                             compress, decompress, append, remove, merge or export\n"
      "                             whose zstd components decode to more than BYTES in\n"
      "                             all inputs and shards together (a shared blob once per\n"
      "                             object written, once for verify; no default)\n"
      "  --max-memory BYTES         bound the process's heap (RLIMIT_DATA): an operation\n"
      "                             that needs more fails with 'out of memory' (exit 1)\n"
      "                             instead of exhausting the machine; implies --pread, so\n"
      "                             mapped inputs do not count against it\n"
      "  --bearer-token-file FILE   for http(s):// inputs, send the token in FILE as\n"
      "                             'Authorization: Bearer' (else $ZT_BEARER_TOKEN, if set)\n"
      "  --timeout T                one remote request, whole transfer (default 60s;\n"
      "                             T is seconds, or 500ms, 30s, 2m)\n"
      "  --retries N                extra attempts after a timeout, reset or 5xx (default 3)\n"
      "  --low-speed BYTES          a request slower than BYTES/s for --low-speed-time\n"
      "                             (default 10s) is a timeout (default 1024; 0 = off):\n"
      "                             a stalled server ends the command in ~40 s\n"
      "  --deadline T               no request of an input after T from its open\n"
      "                             (default 0 = none)\n\n"
      "An input starting with http://, https:// or s3://BUCKET/KEY is read remotely\n"
      "with ranged GETs; s3:// requests are signed with the AWS tools' credentials\n"
      "(AWS_ACCESS_KEY_ID..., AWS_PROFILE, ~/.aws; docs/remote.md).\n\n"
      "limits on what is read (defaults; all of them in docs/limits.md):\n"
      "  manifest 1 GiB; one component decoded 64 GiB (--max-decoded-size); CBOR\n"
      "  nesting 256 levels; zstd bytes per whole-file command: none\n"
      "  (--max-total-decoded); heap: none (--max-memory); convert: npz member 16 GiB\n"
      "  (--max-member-size), safetensors header / GGUF metadata 100 MB\n\n"
      "exit codes:\n"
      "  0  success\n"
      "  1  the file is invalid, or the operation failed (message on stderr)\n"
      "  2  usage error (unknown command or option, missing argument)\n"
      "  3  I/O error (cannot open, read, write or rename a file)\n");
}

// "4096", "64M", "2G": bytes, with binary suffixes.
static bool parse_size(const std::string &s, uint64_t &out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno) return false;
  int shift = 0;
  const std::string suffix = end;
  if (suffix == "K" || suffix == "k")
    shift = 10;
  else if (suffix == "M")
    shift = 20;
  else if (suffix == "G")
    shift = 30;
  else if (suffix == "T")
    shift = 40;
  else if (!suffix.empty())
    return false;
  if (v > (UINT64_MAX >> shift)) return false;
  out = static_cast<uint64_t>(v) << shift;
  return out > 0;
}

// "30", "30s", "500ms", "2m": a duration in milliseconds (0 allowed when
// zero_ok: "off").
static bool parse_duration_ms(const std::string &s, uint64_t &out, bool zero_ok) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  char *end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno) return false;
  const std::string unit = end;
  uint64_t mult = 0;
  if (unit.empty() || unit == "s")
    mult = 1000;
  else if (unit == "ms")
    mult = 1;
  else if (unit == "m" || unit == "min")
    mult = 60000;
  else
    return false;
  if (v > UINT32_MAX / mult * 1000) return false;  // at most ~49 days
  out = v * mult;
  return zero_ok || out > 0;
}

// The token is the file's first line (a trailing newline is not part of it).
static bool read_token_file(const std::string &path, std::string &out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "zt: cannot read --bearer-token-file '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  char buf[8192];
  size_t n = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  out.assign(buf, n);
  out = out.substr(0, out.find_first_of("\r\n"));
  if (out.empty()) {
    std::fprintf(stderr, "zt: --bearer-token-file '%s' is empty\n", path.c_str());
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  install_signal_cleanup();  // Ctrl-C and SIGTERM leave no temporary file
  prepare_process();         // Windows: binary stdout, inputs read rather than mapped
  if (const char *t = std::getenv("ZT_BEARER_TOKEN")) read_options().bearer_token = t;
  int first = 1;
  for (; first < argc && std::strncmp(argv[first], "--", 2) == 0; ++first) {
    const std::string opt = argv[first];
    if (opt == "--pread") {
      read_options().pread = true;
      read_options().pread_given = true;
    } else if (opt == "--max-decoded-size" || opt.rfind("--max-decoded-size=", 0) == 0) {
      std::string v = opt.size() > 18 ? opt.substr(19) : (first + 1 < argc ? argv[++first] : "");
      if (!parse_size(v, read_options().max_decoded_size)) {
        std::fprintf(stderr, "zt: --max-decoded-size takes a positive size in bytes (e.g. 4096, 512M, 2G)\n");
        return kUsage;
      }
    } else if (opt == "--max-total-decoded" || opt.rfind("--max-total-decoded=", 0) == 0) {
      std::string v = opt.size() > 19 ? opt.substr(20) : (first + 1 < argc ? argv[++first] : "");
      if (!parse_size(v, read_options().max_total_decoded)) {
        std::fprintf(stderr, "zt: --max-total-decoded takes a positive size in bytes (e.g. 512M, 2G)\n");
        return kUsage;
      }
    } else if (opt == "--max-memory" || opt.rfind("--max-memory=", 0) == 0) {
      std::string v = opt.size() > 12 ? opt.substr(13) : (first + 1 < argc ? argv[++first] : "");
      uint64_t limit = 0;
      if (!parse_size(v, limit)) {
        std::fprintf(stderr, "zt: --max-memory takes a positive size in bytes (e.g. 512M, 2G)\n");
        return kUsage;
      }
      if (int rc = limit_memory(limit)) return rc;
    } else if (opt == "--timeout" || opt.rfind("--timeout=", 0) == 0 || opt == "--deadline" ||
               opt.rfind("--deadline=", 0) == 0 || opt == "--low-speed-time" ||
               opt.rfind("--low-speed-time=", 0) == 0) {
      const size_t eq = opt.find('=');
      const std::string name = opt.substr(0, eq);
      std::string v = eq != std::string::npos ? opt.substr(eq + 1) : (first + 1 < argc ? argv[++first] : "");
      uint64_t ms = 0;
      const bool deadline = name == "--deadline";
      if (!parse_duration_ms(v, ms, deadline) || (!deadline && ms > UINT32_MAX)) {
        std::fprintf(stderr, "zt: %s takes a duration (e.g. 30, 30s, 500ms, 2m)%s\n", name.c_str(),
                     deadline ? "; 0 = none" : "");
        return kUsage;
      }
      if (name == "--timeout")
        read_options().timeout_ms = static_cast<uint32_t>(ms);
      else if (name == "--deadline")
        read_options().deadline_ms = ms;
      else
        read_options().low_speed_time_ms = static_cast<uint32_t>(std::max<uint64_t>(ms, 1000));
    } else if (opt == "--retries" || opt.rfind("--retries=", 0) == 0 || opt == "--low-speed" ||
               opt.rfind("--low-speed=", 0) == 0) {
      const size_t eq = opt.find('=');
      const std::string name = opt.substr(0, eq);
      std::string v = eq != std::string::npos ? opt.substr(eq + 1) : (first + 1 < argc ? argv[++first] : "");
      char *end = nullptr;
      errno = 0;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v[0] < '0' || v[0] > '9' || *end || errno || n > (name == "--retries" ? 100 : UINT32_MAX)) {
        std::fprintf(stderr, "zt: %s takes a whole number%s\n", name.c_str(),
                     name == "--retries" ? " from 0 to 100" : " of bytes per second (0 = off)");
        return kUsage;
      }
      if (name == "--retries")
        read_options().retries = static_cast<uint32_t>(n);
      else
        read_options().low_speed_bytes = static_cast<uint32_t>(n);
    } else if (opt == "--bearer-token-file" || opt.rfind("--bearer-token-file=", 0) == 0) {
      std::string v = opt.size() > 19 ? opt.substr(20) : (first + 1 < argc ? argv[++first] : "");
      if (v.empty()) {
        std::fprintf(stderr, "zt: --bearer-token-file takes a file name\n");
        return kUsage;
      }
      if (!read_token_file(v, read_options().bearer_token)) return kIo;
    } else {
      break;  // --help, --version, or an unknown option: handled below
    }
  }
  argv += first - 1;
  argc -= first - 1;
  if (argc < 2) {
    print_help();
    return kUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    print_help();
    return kOk;
  }
  if (cmd == "--version" || cmd == "version") {
    std::printf("zt %s (format %s)\n", zt_version_string(), ZT_FORMAT_VERSION);
    return kOk;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto &c : commands()) {
    if (cmd == c.name) {
      if (wants_help(args)) {
        std::printf("%s", c.usage);
        return kOk;
      }
      try {
        return c.run(args);
      } catch (const std::bad_alloc &) {
        // An allocation of the tool itself (the library reports its own as
        // ZT_E_NOMEM): a message and exit 1, never an abort.
        if (read_options().max_memory)
          std::fprintf(stderr, "zt %s: out of memory (--max-memory %llu bytes)\n", cmd.c_str(),
                       static_cast<unsigned long long>(read_options().max_memory));
        else
          std::fprintf(stderr, "zt %s: out of memory\n", cmd.c_str());
        return kFailure;
      }
    }
  }
  std::fprintf(stderr, "zt: unknown command '%s' (see 'zt --help')\n", cmd.c_str());
  return kUsage;
}
