// zt verify: every structural rule and every digest.
#include <cstdio>

#include "cli.h"
#include "commands.h"
#include "decode_budget.h"
#include "terminal_text.h"

namespace ztcli {

const char *const kVerifyUsage =
    "usage: zt verify FILE [--strict] [--quiet] [--canonical]\n\n"
    "Checks the container, the manifest, every object's structure and every\n"
    "component's digest (and that zstd data decodes to the declared size).\n"
    "--strict also checks composite structure (sparse indices, quantization\n"
    "sizes) and bool bytes, and reports spec 1.2 zstd components without the\n"
    "uncompressed_length 1.2 requires (read anyway, as the original\n"
    "implementation reads them). Prints each failure; exits 1 if there is any.\n"
    "--canonical (zTensor v2) also checks canonical form (v2 spec §6.3) and\n"
    "prints each rule the file misses (\"NOT CANONICAL rule N: ...\"); a file\n"
    "that is valid but not canonical exits 1 too.\n";

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
  if (!parse_args(argv, {"--strict", "--quiet", "--canonical"}, {}, a, err)) return usage_error("verify", err);
  if (a.positional.size() != 1) return usage_error("verify", "expected one FILE");
  ztensor::File f;
  if (int rc = open_input(a.positional[0], f, "'" + display_path(a.positional[0]) + "' is not readable")) return rc;
  // verify decodes each distinct blob once, however many objects share it.
  DecodeBudget budget("verify", DecodeBudget::Count::EachBlobOnce);
  if (int rc = budget.add_file(f.handle(), "'" + display_path(a.positional[0]) + "'")) return rc;
  Tally t;
  t.quiet = a.has("--quiet");
  zt_status st = zt_file_verify_n(f.handle(), a.has("--strict") ? 1 : 0, on_failure, &t);
  // A failure of the whole run (out of memory, a bad argument) reaches no
  // callback: report it here, before another call replaces the message.
  if (st != ZT_OK && t.failures == 0) return report("verify: '" + display_path(a.positional[0]) + "'", st);
  size_t count = 0;
  zt_file_object_count(f.handle(), &count);
  uint32_t rule = 0;
  if (a.has("--canonical")) {
    char *why = nullptr;
    const zt_status cst = zt_file_canonical(f.handle(), &rule, &why);
    if (cst != ZT_OK) return report("verify --canonical: '" + display_path(a.positional[0]) + "'", cst);
    if (rule != 0 && !t.quiet) {
      // One line per rule missed ("rule N: ..." items joined by "; ").
      const std::string text = why ? why : "";
      size_t from = 0;
      while (from < text.size()) {
        size_t next = text.find("; rule ", from);
        if (next == std::string::npos) next = text.size();
        std::printf("NOT CANONICAL %s\n", shown(text.substr(from, next - from)).c_str());
        from = next == text.size() ? next : next + 2;
      }
    }
    zt_free(why);
  }
  f = ztensor::File();  // closed before the summary
  if (st != ZT_OK) {
    if (!t.quiet)
      std::printf("%s: %zu failure(s) in %zu object(s)\n", display_path(a.positional[0]).c_str(), t.failures, count);
    return kFailure;
  }
  if (rule != 0) {
    if (!t.quiet)
      std::printf("%s: valid, not canonical (first miss: v2 spec §6.3 rule %u)\n",
                  display_path(a.positional[0]).c_str(), rule);
    return kFailure;
  }
  if (!t.quiet)
    std::printf("%s: OK (%zu objects%s)\n", display_path(a.positional[0]).c_str(), count,
                a.has("--canonical") ? ", canonical" : "");
  return kOk;
}

}  // namespace ztcli
