// zt migrate: any readable version → spec 1.2.0 or zTensor v2.
#include <cstdio>

#include "cli.h"
#include "commands.h"
#include "decode_budget.h"
#include "output_guard.h"
#include "signal_cleanup.h"

namespace ztcli {

const char *const kMigrateUsage =
    "usage: zt migrate IN -o OUT [--to 1.2|2 [--no-canonical]] [--zstd LEVEL | --raw]\n"
    "                  [--digest none|crc32c|sha256] [--no-sync]\n\n"
    "With --to 2 the output is zTensor v2, canonical (spec §6.3: raw parts, xxh3\n"
    "digests) unless --no-canonical (then zstd becomes zt.zstd-seekable/1, crc32c\n"
    "becomes xxh3); see docs/v2.md. Otherwise:\n"
    "Rewrites any readable file (spec 0.1.0, 1.1.0, 1.2.0, v2) as spec 1.2.0, keeping\n"
    "every object, component, attribute and custom field. Legacy big-endian data\n"
    "becomes little-endian. Components keep their encoding unless --zstd LEVEL or\n"
    "--raw is given; digests keep their algorithm (recomputed) unless --digest is\n"
    "given. OUT is written atomically; IN is never overwritten.\n"
    "A v2 input with --to 1.2 keeps what 1.2 can hold (sparse and quantized\n"
    "profiles, f8/complex/bool, attributes; xxh3 digests become crc32c) and is\n"
    "refused, naming object and profile, for what it cannot (zt.mx/1, gguf.*,\n"
    "f4_e2m1, f8_e8m0, unknown layouts); nothing is written then.\n";

int cmd_migrate(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--raw", "--no-sync", kNoCanonicalFlag}, {"-o", "--output", "--zstd", "--digest", "--to"}, a,
                  err))
    return usage_error("migrate", err);
  std::string out = a.get("-o", a.get("--output"));
  if (a.positional.size() != 1 || out.empty()) return usage_error("migrate", "expected IN and -o OUT");
  if (int rc = refuse_url("migrate", "input", a.positional[0])) return rc;
  if (int rc = refuse_url("migrate", "output", out)) return rc;
  if (int rc = refuse_output_is_input("migrate", out, a.positional)) return rc;
  zt_migrate_options mo;
  zt_migrate_options_init(&mo);
  if (a.has("--zstd")) {
    if (!parse_zstd_level(a.get("--zstd"), mo.zstd_level))
      return usage_error("migrate", "--zstd takes a level (-131072..22)");
    mo.recompress = 1;
  }
  if (a.has("--raw")) mo.recompress = -1;
  if (a.has("--digest") && !parse_digest(a.get("--digest"), mo.digest))
    return usage_error("migrate", "--digest takes none, crc32c or sha256");
  if (a.has("--no-sync")) mo.sync = 0;
  if (!parse_format(a, mo.format, mo.canonical, err, "--to")) return usage_error("migrate", err);
  if (mo.format == 2 && mo.canonical && (a.has("--zstd") || (a.has("--digest") && a.get("--digest") != "none")))
    return usage_error("migrate", "canonical v2 is raw with xxh3 digests; add --no-canonical for --zstd or --digest");
  if (int rc = refuse_read_options("migrate")) return rc;
  if (int rc = check_rewrite_budget("migrate", a.positional[0])) return rc;
  const SignalCleanup on_signal(SignalCleanup::kOutputFile, replaced_target(out));
  zt_status st = zt_migrate(a.positional[0].c_str(), out.c_str(), &mo);
  if (st != ZT_OK) return report("migrate '" + a.positional[0] + "'", st);
  return kOk;
}

}  // namespace ztcli
