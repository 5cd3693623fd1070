// zt compress / zt decompress: rewrite a file with every component zstd-
// compressed or raw, through zt_migrate (which keeps objects, attributes and
// unknown fields, and recomputes each component's digest).
#include <sys/stat.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "decode_budget.h"
#include "output_guard.h"
#include "signal_cleanup.h"

namespace ztcli {

const char *const kCompressUsage =
    "usage: zt compress IN -o OUT [--zstd LEVEL] [--digest none|crc32c|sha256] [--format 1.2|2] [--quiet] [--json]\n"
    "                   [--no-sync]\n\n"
    "--format 2 writes zTensor v2 with zt.zstd-seekable/1 parts (docs/v2.md).\n"
    "Rewrites IN with every component compressed with zstd at LEVEL (default 3),\n"
    "keeping every object, attribute, logical type and custom field; digests\n"
    "keep their algorithm and are recomputed over the new bytes (or use\n"
    "--digest). OUT is written atomically and may not be IN.\n";

const char *const kDecompressUsage =
    "usage: zt decompress IN -o OUT [--digest none|crc32c|sha256] [--format 1.2|2 [--no-canonical]] [--quiet]\n"
    "                     [--json] [--no-sync]\n\n"
    "--format 2 writes zTensor v2, canonical unless --no-canonical (docs/v2.md).\n"
    "Rewrites IN with every component stored raw (uncompressed), keeping\n"
    "everything else as 'zt compress' does. OUT is written atomically.\n";

namespace {

uint64_t file_size(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

int rewrite(const char *cmd, const std::vector<std::string> &argv, bool compress) {
  Args a;
  std::string err;
  std::vector<std::string> with_value = {"-o", "--output", "--digest"};
  if (compress) with_value.push_back("--zstd");
  with_value.push_back(kFormatOption);
  if (!parse_args(argv, {"--quiet", "--json", "--no-sync", kNoCanonicalFlag}, with_value, a, err))
    return usage_error(cmd, err);
  const std::string out = a.get("-o", a.get("--output"));
  if (a.positional.size() != 1 || out.empty()) return usage_error(cmd, "expected IN and -o OUT");
  if (int rc = refuse_url(cmd, "input", a.positional[0])) return rc;
  if (int rc = refuse_url(cmd, "output", out)) return rc;
  if (int rc = refuse_output_is_input(cmd, out, a.positional)) return rc;
  zt_migrate_options mo;
  zt_migrate_options_init(&mo);
  mo.recompress = compress ? 1 : -1;
  if (a.has("--zstd") && !parse_zstd_level(a.get("--zstd"), mo.zstd_level))
    return usage_error(cmd, "--zstd takes a level (-131072..22)");
  if (a.has("--digest") && !parse_digest(a.get("--digest"), mo.digest))
    return usage_error(cmd, "--digest takes none, crc32c or sha256");
  if (a.has("--no-sync")) mo.sync = 0;
  if (!parse_format(a, mo.format, mo.canonical, err)) return usage_error(cmd, err);
  // zstd parts are not canonical: a compressed v2 file is a non-canonical one.
  if (compress && mo.format == 2) mo.canonical = 0;
  const std::string &in = a.positional[0];
  if (int rc = refuse_read_options(cmd)) return rc;
  if (int rc = check_rewrite_budget(cmd, in)) return rc;
  const SignalCleanup on_signal(SignalCleanup::kOutputFile, replaced_target(out));
  zt_status st = zt_migrate(in.c_str(), out.c_str(), &mo);
  if (st != ZT_OK) return report(std::string(cmd) + " '" + in + "'", st);
  const uint64_t before = file_size(in), after = file_size(out);
  if (a.has("--json")) {
    nlohmann::ordered_json j{
        {"command", cmd}, {"input", in}, {"output", out}, {"input_bytes", before}, {"output_bytes", after}};
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else if (!a.has("--quiet")) {
    std::printf("%s: %s -> %s\n", out.c_str(), human_bytes(before).c_str(), human_bytes(after).c_str());
  }
  return kOk;
}

}  // namespace

int cmd_compress(const std::vector<std::string> &args) {
  return rewrite("compress", args, true);
}
int cmd_decompress(const std::vector<std::string> &args) {
  return rewrite("decompress", args, false);
}

}  // namespace ztcli
