// zt verify: every structural rule and every digest.
#include <cstdio>

#include "cli.h"
#include "commands.h"
#include "decode_budget.h"
#include "terminal_text.h"

namespace ztcli {

const char *const kVerifyUsage =
    "usage: zt verify FILE [--strict] [--quiet]\n\n"
    "Checks the container, the manifest, every object's structure and every\n"
    "component's digest (and that zstd data decodes to the declared size).\n"
    "--strict also checks composite structure (sparse indices, quantization\n"
    "sizes) and bool bytes, and reports spec 1.2 zstd components without the\n"
    "uncompressed_length 1.2 requires (read anyway, as the original\n"
    "implementation reads them). Prints each failure; exits 1 if there is any.\n";

namespace {

struct Tally {
  size_t failures = 0;
  bool quiet = false;
};

// Names and roles come with their lengths: either may hold NULs.
void on_failure(void *user, const char *object, size_t object_len, const char *role, size_t role_len, zt_status st,
                const char *message) {
  auto *t = static_cast<Tally *>(user);
  ++t->failures;
  if (t->quiet) return;
  std::printf("FAIL %s%s%s: %s: %s\n", shown(std::string_view(object, object_len)).c_str(), role_len ? " / " : "",
              shown(std::string_view(role, role_len)).c_str(), zt_status_str(st), shown(message).c_str());
}

}  // namespace

int cmd_verify(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--strict", "--quiet"}, {}, a, err)) return usage_error("verify", err);
  if (a.positional.size() != 1) return usage_error("verify", "expected one FILE");
  FilePtr f;
  if (int rc = open_input(a.positional[0], f, "'" + display_path(a.positional[0]) + "' is not readable")) return rc;
  // verify decodes each distinct blob once, however many objects share it.
  DecodeBudget budget("verify", DecodeBudget::Count::EachBlobOnce);
  if (int rc = budget.add_file(f.get(), "'" + display_path(a.positional[0]) + "'")) return rc;
  Tally t;
  t.quiet = a.has("--quiet");
  zt_status st = zt_file_verify_n(f.get(), a.has("--strict") ? 1 : 0, on_failure, &t);
  // A failure of the whole run (out of memory, a bad argument) reaches no
  // callback: report it here, before another call replaces the message.
  if (st != ZT_OK && t.failures == 0) return report("verify: '" + display_path(a.positional[0]) + "'", st);
  size_t count = 0;
  zt_file_object_count(f.get(), &count);
  f.reset();
  if (st != ZT_OK) {
    if (!t.quiet)
      std::printf("%s: %zu failure(s) in %zu object(s)\n", display_path(a.positional[0]).c_str(), t.failures, count);
    return kFailure;
  }
  if (!t.quiet) std::printf("%s: OK (%zu objects)\n", display_path(a.positional[0]).c_str(), count);
  return kOk;
}

}  // namespace ztcli
