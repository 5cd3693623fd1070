// The one rule for showing a path or URL in a message, a repr or a JSON
// field (docs/remote.md, "Security"): a URL loses what may be a credential,
// anything else is left as it is. Header-only and free of the library's
// types: the library (redact_url, every remote message) and the zt tool
// (display_path, every message and JSON field that quotes an input or an
// output) compile this same code. The Python binding's
// ztensor._redact.redact_url follows the same rule for its reprs and
// messages; bindings/python/tests/test_redaction.py checks the two agree.
#pragma once

#include <cctype>
#include <cstring>
#include <string>

namespace zt {

// Whether `s` starts with `prefix` (lower case), ignoring the case of `s`.
inline bool starts_with_ascii_nocase(const std::string &s, const char *prefix) {
  const size_t n = std::strlen(prefix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

// http://, https:// or s3:// (any case): a location the library reads
// remotely (looks_like_url, below, is any scheme).
inline bool is_remote_url(const std::string &s) {
  return starts_with_ascii_nocase(s, "http://") || starts_with_ascii_nocase(s, "https://") ||
         starts_with_ascii_nocase(s, "s3://");
}

// "scheme://..." with a scheme of two or more letters, digits, '+', '-' or
// '.' starting with a letter (one letter is a Windows drive, "C://x"): a
// URL of any scheme (ftp://, file://: zt_url_options.allow_any_scheme).
inline bool looks_like_url(const std::string &s) {
  const size_t sep = s.find("://");
  if (sep == std::string::npos || sep < 2 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (size_t i = 1; i < sep; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

// `path_or_url` as messages may show it. For a URL (looks_like_url):
// "user:password@" becomes "<credentials>@", a query string (where
// pre-signed URLs carry their signature, and tokens often travel) becomes
// "?<redacted>", a fragment is dropped. For s3://: only "...@" in the
// bucket part (no bucket has '@'; the key is literal and may hold '?' or
// '#'). Anything else is returned unchanged: escaping for a terminal or for
// bytes that are not UTF-8 is the caller's (printable(), shown()).
inline std::string redact_url_text(const std::string &path_or_url) {
  if (!looks_like_url(path_or_url)) return path_or_url;
  const bool s3 = starts_with_ascii_nocase(path_or_url, "s3://");
  std::string u = path_or_url;
  if (!s3) {
    const size_t q = u.find_first_of("?#");
    if (q != std::string::npos) u = u.substr(0, q) + (u[q] == '?' ? "?<redacted>" : "");
  }
  const size_t auth = u.find("://") + 3;
  const size_t slash = u.find('/', auth);
  const size_t end = slash == std::string::npos ? u.size() : slash;
  // The last '@' before the path ends the user information ("a@b:c@host").
  const size_t at = end > auth ? u.rfind('@', end - 1) : std::string::npos;
  if (at != std::string::npos && at >= auth) u = u.substr(0, auth) + "<credentials>@" + u.substr(at + 1);
  return u;
}

}  // namespace zt
