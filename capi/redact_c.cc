// zt_redact_url: the library's one rule for showing a path or URL
// (src/util/redact_url.h), for bindings to use in their own reprs and
// messages instead of a copy of the rule.
#include <cstring>
#include <string>

#include "handles.h"
#include "util/redact_url.h"

extern "C" {

ZT_API zt_status zt_redact_url(const char *path_or_url, size_t len, char *dst, size_t capacity, size_t *out_len) {
  return zt::capi::guard([&]() -> zt_status {
    if (!path_or_url && len) zt::capi::invalid("zt_redact_url: path_or_url is NULL");
    if (!dst && capacity) zt::capi::invalid("zt_redact_url: dst is NULL with a non-zero capacity");
    const std::string shown = zt::redact_url_text(std::string(path_or_url ? path_or_url : "", len));
    if (out_len) *out_len = shown.size();
    if (capacity < shown.size() + 1)
      zt::fail(ZT_E_BUFFER_TOO_SMALL, "zt_redact_url: needs " + std::to_string(shown.size() + 1) +
                                          " bytes with the NUL, the buffer has " + std::to_string(capacity));
    std::memcpy(dst, shown.data(), shown.size());
    dst[shown.size()] = '\0';
    return ZT_OK;
  });
}

}  // extern "C"
