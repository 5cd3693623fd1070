// What a response means: a remote source's checks of every answer against
// what was asked and against the first answer (size, validators), and S3's
// refusals put in words. Each verdict says whether another attempt may help
// (the retry policy, http_retry.h, acts on it).
#include "io/http_retry.h"
#include "io/http_transfer.h"

#ifdef ZT_HAVE_CURL

#include <cstring>

#include "util/error.h"

namespace zt {

namespace {

// The text of <name>...</name> in an S3 error document (no nesting, no
// entities beyond the five XML ones), at most 200 characters, printable.
std::string xml_field(const std::string &xml, const char *name) {
  const std::string open = std::string("<") + name + ">", close = std::string("</") + name + ">";
  const size_t a = xml.find(open);
  if (a == std::string::npos) return "";
  const size_t b = xml.find(close, a + open.size());
  if (b == std::string::npos) return "";
  std::string v = xml.substr(a + open.size(), std::min<size_t>(b - a - open.size(), 200));
  static const std::pair<const char *, char> kEntities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}, {"&amp;", '&'}};
  for (const auto &[ent, ch] : kEntities)
    for (size_t p; (p = v.find(ent)) != std::string::npos;) v.replace(p, std::strlen(ent), 1, ch);
  return printable(v);
}

std::string range_text(const Transfer &t) {
  if (!t.parts.empty())
    return std::to_string(t.parts.size()) + " ranges of bytes [" + std::to_string(t.parts.front().offset) + ", " +
           std::to_string(t.parts.back().offset + t.parts.back().len) + ")";
  return t.suffix ? "the last " + std::to_string(t.len) + " bytes"
                  : "bytes [" + std::to_string(t.offset) + ", +" + std::to_string(t.len) + ")";
}

}  // namespace

std::string HttpTransport::changed_text(const std::string &detail) const {
  return "the object changed while being read (" + detail + "); reopen it";
}

Outcome HttpTransport::judge(const Transfer &t, CURLcode rc) const {
  Outcome o;
  const std::string what = "'" + path_ + "': GET " + range_text(t) + ": ";
  // "bytes=-N" answered from the start (s3rver does this): the server
  // has no suffix ranges, but told the size; open_tail asks again with
  // an explicit range. Judged before the body's length, which is wrong.
  if (t.suffix && t.code == 206 && t.have_range && !t.total_unknown && t.range_start == 0 &&
      t.range_end + 1 < t.range_total) {
    no_suffix_total_ = t.range_total;
    return {ZT_E_IO, false,
            what + "the server answered a suffix range with bytes 0-" + std::to_string(t.range_end) + "/" +
                std::to_string(t.range_total)};
  }
  // The whole object (refused by its Content-Length before any byte, or at
  // its first bytes) or one range for many: no multi-range here.
  if (t.multirange_refused ||
      (!t.parts.empty() && (t.code == 200 || (t.code == 206 && multipart_boundary(t.content_type).empty())))) {
    multirange_ = -1;
    return {ZT_E_UNSUPPORTED, false,
            what + "the server does not answer multi-range requests as asked" +
                (t.abort_status == ZT_E_IO ? " (" + t.abort_message + ")" : std::string())};
  }
  if (t.abort_status != ZT_OK) return {t.abort_status, false, what + t.abort_message};
  if (rc == CURLE_FILESIZE_EXCEEDED && t.code == 200)
    return {ZT_E_UNSUPPORTED, false,
            what + "the server ignores Range requests and announces the whole object, larger than " +
                "max_unranged_bytes (" + std::to_string(s_.max_unranged_bytes) + "); refused"};
  if (rc == CURLE_FILESIZE_EXCEEDED)
    return {ZT_E_IO, false,
            what + "the response's Content-Length is larger than the " + std::to_string(t.len) +
                " bytes requested (HTTP " + std::to_string(t.code) + "); refused"};
  if (rc == CURLE_TOO_MANY_REDIRECTS)
    return {ZT_E_LIMIT, false, what + "more than max_redirects (" + std::to_string(s_.max_redirects) + ") redirects"};
  if (rc != CURLE_OK) {
    std::string detail = t.errbuf[0] ? std::string(t.errbuf) : std::string(curl_easy_strerror(rc));
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      if (past_deadline())
        return {ZT_E_IO, false,
                what + scrub(detail) + " (the overall deadline of " + std::to_string(s_.deadline_ms) + " ms passed)"};
      detail += " (timeout " + std::to_string(s_.timeout_ms) + " ms";
      if (s_.low_speed_bytes)
        detail += ", or below " + std::to_string(s_.low_speed_bytes) + " bytes/s for " +
                  std::to_string(std::max<uint32_t>(1, s_.low_speed_time_ms / 1000)) + " s";
      detail += ")";
    }
    return {ZT_E_IO, retryable_curl(rc), what + scrub(detail)};
  }
  if (t.code == 412) return {ZT_E_CHANGED, false, what + changed_text("the server refused If-Match " + etag_)};
  if (t.code >= 500 || t.code == 429 || t.code == 408) return {ZT_E_IO, true, what + "HTTP " + std::to_string(t.code)};
  if (s3_ && t.code >= 300 && t.code != 416) return {ZT_E_IO, false, scrub(s3_failure(t, what))};
  if (!t.parts.empty() && t.code == 206) {
    if ((!etag_.empty() && t.etag != etag_) || (!last_modified_.empty() && t.last_modified != last_modified_))
      return {ZT_E_CHANGED, false,
              what + changed_text("ETag " + t.etag + " / Last-Modified " + t.last_modified + " now, was " + etag_ +
                                  " / " + last_modified_)};
    if (!t.multipart || !t.multipart->complete())
      return {
          ZT_E_IO, true,
          what + "truncated multipart body: " + std::to_string(t.received) + " of " + std::to_string(t.len) + " bytes"};
    multirange_ = 1;
    return o;
  }
  if (t.code == 416 && t.range_total == 0 && t.suffix) return o;  // an empty object
  if (t.code == 200 && t.allow_whole) return o;
  if (t.code != 206 && !(t.code == 0 && !http_))
    return {ZT_E_IO, false, what + "HTTP " + std::to_string(t.code) + (t.code == 200 ? " (Range ignored)" : "")};
  if (http_) {
    if (!t.have_range) return {ZT_E_IO, false, what + "206 response without a Content-Range"};
    // Once the size is known, a server that no longer knows it is
    // serving something else.
    if (size_known_ && t.total_unknown)
      return {ZT_E_CHANGED, false,
              what + changed_text("Content-Range now gives no total size ('/*'), was " + std::to_string(size_))};
    if (!t.total_unknown && t.range_end >= t.range_total)
      return {ZT_E_IO, false,
              what + "inconsistent Content-Range: bytes " + std::to_string(t.range_start) + "-" +
                  std::to_string(t.range_end) + "/" + std::to_string(t.range_total)};
    if (t.suffix && (t.range_end - t.range_start >= t.len || t.range_end + 1 != t.range_total))
      return {ZT_E_IO, false,
              what + "the server answered with bytes " + std::to_string(t.range_start) + "-" +
                  std::to_string(t.range_end) + ", not the end of the object"};
    if ((!etag_.empty() && t.etag != etag_) || (!last_modified_.empty() && t.last_modified != last_modified_))
      return {ZT_E_CHANGED, false,
              what + changed_text("ETag " + t.etag + " / Last-Modified " + t.last_modified + " now, was " + etag_ +
                                  " / " + last_modified_)};
    if (size_known_ && !t.total_unknown && t.range_total != size_)
      return {
          ZT_E_CHANGED, false,
          what + changed_text("its size is now " + std::to_string(t.range_total) + ", was " + std::to_string(size_))};
    const bool clipped = t.clip && !t.total_unknown && t.range_start == t.offset &&
                         t.range_end < t.offset + t.len - 1 && t.range_end + 1 == t.range_total;
    if (!t.suffix && !clipped && (t.range_start != t.offset || t.range_end != t.offset + t.len - 1))
      return {
          ZT_E_IO, false,
          what + "the server answered with bytes " + std::to_string(t.range_start) + "-" + std::to_string(t.range_end)};
    const uint64_t want = t.suffix || clipped ? t.range_end - t.range_start + 1 : t.len;
    if (t.received != want)
      return {ZT_E_IO, true,
              what + "truncated body: " + std::to_string(t.received) + " of " + std::to_string(want) + " bytes"};
  } else if (t.received != t.len) {
    return {ZT_E_IO, true,
            what + "short read: " + std::to_string(t.received) + " of " + std::to_string(t.len) + " bytes"};
  }
  return o;
}

// An S3 refusal in words: the error XML's Code, and for a 403 where the
// credentials came from and which region was signed for, with the
// likely cause when S3 names it (clock skew, region, key, secret, token).
std::string HttpTransport::s3_failure(const Transfer &t, const std::string &what) const {
  const std::string code = xml_field(t.error_body, "Code");
  const std::string creds = "credentials: " + s3_->credential_source;
  const std::string region = "signed for region '" + s3_->region + "' from " + s3_->region_source;
  std::string m = what + "HTTP " + std::to_string(t.code) + (code.empty() ? "" : " " + code);
  const std::string wanted =
      !xml_field(t.error_body, "Region").empty() ? xml_field(t.error_body, "Region") : t.bucket_region;
  if (code == "RequestTimeTooSkewed") {
    m += ": this machine's clock looks wrong (request time " + xml_field(t.error_body, "RequestTime") +
         ", server time " + xml_field(t.error_body, "ServerTime") + ")";
  } else if (code == "AuthorizationHeaderMalformed" || code == "PermanentRedirect" ||
             code == "IllegalLocationConstraintException" || (t.code >= 300 && t.code < 400) ||
             (!wanted.empty() && wanted != s3_->region)) {
    m += ": the region looks wrong: " + region;
    if (!wanted.empty()) m += ", the bucket is in '" + wanted + "'";
    m += " (set AWS_REGION, the profile's region or zt_url_options.s3_region)";
  } else if (code == "SignatureDoesNotMatch") {
    m += ": the secret key does not match the access key id";
  } else if (code == "InvalidAccessKeyId") {
    m += ": the server does not know the access key id";
  } else if (code == "InvalidToken" || code == "ExpiredToken" || code == "TokenRefreshRequired") {
    m += ": the session token is invalid or expired";
  } else if (code == "NoSuchKey" || (code.empty() && t.code == 404)) {
    m += ": bucket '" + printable(s3_->bucket) + "' has no key '" + printable(s3_->key) + "'";
  } else if (code == "NoSuchBucket") {
    m += ": there is no bucket '" + printable(s3_->bucket) + "'";
  } else if (t.code == 403 || t.code == 401) {
    m += ": access denied";
  }
  if (t.code == 403 || t.code == 401 || t.code == 400) m += " [" + creds + "; " + region + "]";
  const std::string said = xml_field(t.error_body, "Message");
  if (!said.empty()) m += "; the server says: " + said;
  return m;
}

}  // namespace zt

#endif  // ZT_HAVE_CURL
