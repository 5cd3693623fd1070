// s3://bucket/key → the HTTP(S) URL to GET, the region to sign for and the
// credentials to sign with, found the way the AWS tools find them
// (docs/remote.md, "S3"): explicit settings, then the environment, then the
// profile files, else anonymous. No I/O beyond reading ~/.aws files, and
// those only for what the options and the environment leave unset: never
// when the keys, region and endpoint all come from them.
#pragma once

#include <cstdint>
#include <string>

namespace zt {

struct UrlSettings;

// ~/.aws/config and ~/.aws/credentials (or AWS_CONFIG_FILE,
// AWS_SHARED_CREDENTIALS_FILE) larger than this are refused (ZT_E_LIMIT):
// such files are a few KiB, and one that names /dev/zero must not eat
// memory. docs/limits.md.
constexpr uint64_t kMaxAwsFileBytes = uint64_t{1} << 20;

struct S3Location {
  std::string bucket, key;
  std::string http_url;  // path-style or virtual-hosted
  std::string region;
  std::string region_source;    // "zt_url_options", "AWS_REGION", "profile 'p' in FILE", "default"
  std::string endpoint_source;  // "" when AWS's own endpoint is used
  bool sign = false;
  std::string access_key, secret_key, session_token;
  // Where the credentials came from, for messages: "zt_url_options",
  // "environment (AWS_ACCESS_KEY_ID)", "profile 'p' in ~/.aws/credentials",
  // or "none (anonymous request)". Never a secret.
  std::string credential_source;
};

bool is_s3_url(const std::string &url);

// Throws ZT_E_INVALID_ARG for a malformed s3:// URL or endpoint, ZT_E_IO for
// an unreadable profile file or one that is not a regular file (a FIFO is
// never waited on), ZT_E_LIMIT for one past kMaxAwsFileBytes, ZT_E_NOT_FOUND
// for a named profile that exists in neither file.
S3Location resolve_s3(const std::string &url, const UrlSettings &s);

// The key encoded as S3's canonical URI wants it: every byte except
// A-Z a-z 0-9 - . _ ~ and '/' as %XX.
std::string s3_encode_key(const std::string &key);

}  // namespace zt
