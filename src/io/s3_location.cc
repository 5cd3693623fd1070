#include "io/s3_location.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "io/http_source.h"
#include "platform/file.h"
#include "util/error.h"

namespace zt {
namespace {

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

std::string trim(const std::string &s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r' || s[b - 1] == '\n')) --b;
  return s.substr(a, b - a);
}

// One AWS shared file: section → key → value. A nested block ("s3 =" then
// indented "endpoint_url = ...") becomes keys "s3.endpoint_url".
using Ini = std::map<std::string, std::map<std::string, std::string>>;

// The whole text of an AWS file, read safely whatever the path names: opened
// without blocking (a FIFO would wait for a writer for ever), refused
// unless a regular file (/dev/zero never ends), and at most
// kMaxAwsFileBytes (docs/limits.md). False when it does not exist.
bool read_aws_file(const std::string &path, std::string &text) {
  const std::string label = "the AWS file '" + printable(path) + "'";
  switch (platform::read_small_file(path, kMaxAwsFileBytes, label, text)) {
    case platform::SmallFile::kMissing:
      return false;
    case platform::SmallFile::kTooLarge:
      fail(ZT_E_LIMIT, label + " is larger than " + std::to_string(kMaxAwsFileBytes >> 20) +
                           " MiB; refused (an AWS config or credentials file is a few KiB)");
    case platform::SmallFile::kRead:
      break;
  }
  return true;
}

bool read_ini(const std::string &path, Ini &out) {
  std::string text;
  if (!read_aws_file(path, text)) return false;
  std::istringstream in(text);
  std::string line, section, nested;
  while (std::getline(in, line)) {
    const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      section = trim(t.substr(1, t.size() - 2));
      nested.clear();
      out[section];
      continue;
    }
    const size_t eq = t.find('=');
    if (eq == std::string::npos || section.empty()) continue;
    const std::string k = trim(t.substr(0, eq)), v = trim(t.substr(eq + 1));
    if (indented && !nested.empty()) {
      out[section][nested + "." + k] = v;
    } else if (v.empty()) {
      nested = k;
    } else {
      nested.clear();
      out[section][k] = v;
    }
  }
  return true;
}

std::string home_file(const char *override_var, const char *rel) {
  std::string p = env(override_var);
  if (!p.empty()) return p;
  std::string home = env("HOME");
  return home.empty() ? std::string() : home + "/" + rel;
}

// What a profile says, from ~/.aws/credentials and ~/.aws/config, each file
// read only when something is looked up in it: neither is touched when the
// options and the environment give everything.
class Profile {
 public:
  explicit Profile(std::string name)
      : name_(std::move(name)),
        credentials_file_(home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials")),
        config_file_(home_file("AWS_CONFIG_FILE", ".aws/config")) {}

  const std::string &credentials_file() const { return credentials_file_; }
  const std::string &config_file() const { return config_file_; }

  // Whether the profile is in either file (reads both).
  bool found() {
    load_credentials();
    load_config();
    return in_credentials_ || in_config_;
  }

  // A key's value and, in `where`, which file gave it; "" when neither has
  // it. with_credentials: look in the credentials file first (keys, and
  // what else is looked up alongside them); else only the config file.
  std::string get(const char *key, bool with_credentials, std::string &where) {
    if (with_credentials) {
      load_credentials();
      auto it = creds_.find(key);
      if (it != creds_.end() && !it->second.empty()) {
        where = "profile '" + name_ + "' in " + credentials_file_;
        return it->second;
      }
    }
    load_config();
    auto it = config_.find(key);
    if (it != config_.end() && !it->second.empty()) {
      where = "profile '" + name_ + "' in " + config_file_;
      return it->second;
    }
    return "";
  }

 private:
  void load_credentials() {
    if (credentials_read_) return;
    credentials_read_ = true;
    Ini ini;
    if (credentials_file_.empty() || !read_ini(credentials_file_, ini)) return;
    auto it = ini.find(name_);
    if (it == ini.end()) return;
    in_credentials_ = true;
    creds_ = std::move(it->second);
  }
  void load_config() {
    if (config_read_) return;
    config_read_ = true;
    Ini ini;
    if (config_file_.empty() || !read_ini(config_file_, ini)) return;
    auto it = ini.find(name_ == "default" ? "default" : "profile " + name_);
    if (it == ini.end()) return;
    in_config_ = true;
    config_ = std::move(it->second);
  }

  std::string name_, credentials_file_, config_file_;
  bool credentials_read_ = false, config_read_ = false, in_credentials_ = false, in_config_ = false;
  std::map<std::string, std::string> creds_, config_;
};

bool valid_region(const std::string &r) {
  if (r.empty() || r.size() > 64) return false;
  for (char c : r)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

bool valid_bucket(const std::string &b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_')) return false;
  return true;
}

}  // namespace

bool is_s3_url(const std::string &url) {
  return url.size() >= 5 && (url.compare(0, 5, "s3://") == 0 || url.compare(0, 5, "S3://") == 0);
}

std::string s3_encode_key(const std::string &key) {
  static const char *hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : key) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

S3Location resolve_s3(const std::string &url, const UrlSettings &s) {
  S3Location loc;
  // The key is taken literally, as the AWS CLI does: "s3://b/a%20b" names
  // the key "a%20b".
  const std::string rest = url.substr(5);
  const size_t slash = rest.find('/');
  loc.bucket = rest.substr(0, slash);
  if (!valid_bucket(loc.bucket))
    fail(ZT_E_INVALID_ARG, "'" + redact_url(url) + "': not an S3 bucket name (3 to 63 of a-z 0-9 . - _)");
  if (slash == std::string::npos || slash + 1 == rest.size())
    fail(ZT_E_INVALID_ARG, "'" + redact_url(url) + "': no object key (s3://BUCKET/KEY)");
  loc.key = rest.substr(slash + 1);

  // The profile: named explicitly, by AWS_PROFILE, or "default". A profile
  // named on purpose must exist; a missing default just means none.
  std::string profile_name = s.s3_profile;
  bool named = !profile_name.empty();
  if (!named && !env("AWS_PROFILE").empty()) {
    profile_name = env("AWS_PROFILE");
    named = true;
  }
  if (profile_name.empty()) profile_name = "default";
  Profile prof(profile_name);
  // Keys from the profile; a profile named on purpose must exist.
  bool keys_from_profile = false;
  auto from_profile_keys = [&](const char *key, std::string &where) -> std::string {
    if (!keys_from_profile) {
      keys_from_profile = true;
      if (named && !prof.found())
        fail(ZT_E_NOT_FOUND, "'" + redact_url(url) + "': AWS profile '" + printable(profile_name) +
                                 "' is in neither '" + printable(prof.credentials_file()) + "' nor '" +
                                 printable(prof.config_file()) + "'");
    }
    return prof.get(key, true, where);
  };
  // Region and endpoint from the profile, when neither the options nor the
  // environment give them: with the keys from the profile, as the keys
  // are found; else from the config file alone (the credentials file holds
  // keys, which came from elsewhere).
  auto from_profile = [&](const char *key, std::string &where) -> std::string {
    return prof.get(key, keys_from_profile, where);
  };

  // Credentials, in the AWS tools' order.
  if (s.s3_unsigned) {
    loc.credential_source = "none (unsigned requests were asked for)";
  } else if (!s.aws_access_key_id.empty() || !s.aws_secret_access_key.empty()) {
    if (s.aws_access_key_id.empty() || s.aws_secret_access_key.empty())
      fail(ZT_E_INVALID_ARG, "'" + redact_url(url) + "': zt_url_options sets only one of aws_access_key_id and " +
                                 "aws_secret_access_key");
    loc.access_key = s.aws_access_key_id;
    loc.secret_key = s.aws_secret_access_key;
    loc.session_token = s.aws_session_token;
    loc.credential_source = "zt_url_options";
  } else if (!s.s3_profile.empty()) {
    std::string where;
    loc.access_key = from_profile_keys("aws_access_key_id", where);
    loc.secret_key = from_profile_keys("aws_secret_access_key", where);
    loc.session_token = from_profile_keys("aws_session_token", where);
    loc.credential_source = where;
  } else if (!env("AWS_ACCESS_KEY_ID").empty() && !env("AWS_SECRET_ACCESS_KEY").empty()) {
    loc.access_key = env("AWS_ACCESS_KEY_ID");
    loc.secret_key = env("AWS_SECRET_ACCESS_KEY");
    loc.session_token = env("AWS_SESSION_TOKEN");
    loc.credential_source = "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY" +
                            std::string(loc.session_token.empty() ? "" : ", AWS_SESSION_TOKEN") + ")";
  } else {
    std::string where;
    loc.access_key = from_profile_keys("aws_access_key_id", where);
    loc.secret_key = from_profile_keys("aws_secret_access_key", where);
    loc.session_token = from_profile_keys("aws_session_token", where);
    loc.credential_source = where;
  }
  if (!s.s3_unsigned && (loc.access_key.empty() || loc.secret_key.empty())) {
    if (!loc.access_key.empty() || !loc.secret_key.empty())
      fail(ZT_E_INVALID_ARG, "'" + redact_url(url) + "': " + loc.credential_source +
                                 " has only one of aws_access_key_id and aws_secret_access_key");
    loc.access_key.clear();
    loc.secret_key.clear();
    loc.session_token.clear();
    loc.credential_source =
        "none found (anonymous request): no AWS_ACCESS_KEY_ID, and profile '" + profile_name + "' has no keys";
  }
  loc.sign = !loc.access_key.empty();
  if (loc.access_key.find(':') != std::string::npos)
    fail(ZT_E_INVALID_ARG,
         "'" + redact_url(url) + "': the access key id from " + loc.credential_source + " contains ':'");

  // Region and endpoint.
  std::string where;
  if (!s.s3_region.empty()) {
    loc.region = s.s3_region;
    loc.region_source = "zt_url_options";
  } else if (!env("AWS_REGION").empty()) {
    loc.region = env("AWS_REGION");
    loc.region_source = "AWS_REGION";
  } else if (!env("AWS_DEFAULT_REGION").empty()) {
    loc.region = env("AWS_DEFAULT_REGION");
    loc.region_source = "AWS_DEFAULT_REGION";
  } else if (!(loc.region = from_profile("region", where)).empty()) {
    loc.region_source = where;
  } else {
    loc.region = "us-east-1";
    loc.region_source = "the default";
  }
  if (!valid_region(loc.region))
    fail(ZT_E_INVALID_ARG, "'" + redact_url(url) + "': region '" + printable(loc.region) + "' from " +
                               loc.region_source + " is not a region name (a-z 0-9 -)");
  std::string endpoint;
  if (!s.s3_endpoint.empty()) {
    endpoint = s.s3_endpoint;
    loc.endpoint_source = "zt_url_options";
  } else if (!env("AWS_ENDPOINT_URL_S3").empty()) {
    endpoint = env("AWS_ENDPOINT_URL_S3");
    loc.endpoint_source = "AWS_ENDPOINT_URL_S3";
  } else if (!env("AWS_ENDPOINT_URL").empty()) {
    endpoint = env("AWS_ENDPOINT_URL");
    loc.endpoint_source = "AWS_ENDPOINT_URL";
  } else if (!(endpoint = from_profile("s3.endpoint_url", where)).empty() ||
             !(endpoint = from_profile("endpoint_url", where)).empty()) {
    loc.endpoint_source = where;
  }

  // Path-style whenever an endpoint is set (S3-compatible stores rarely
  // have per-bucket host names), virtual-hosted on AWS, unless told.
  // A bucket with a dot cannot be a TLS host name label: path-style.
  std::string scheme = "https://", host;
  if (endpoint.empty()) {
    host = "s3." + loc.region + ".amazonaws.com";
  } else {
    const size_t sep = endpoint.find("://");
    if (sep == std::string::npos || (endpoint.compare(0, sep, "http") != 0 && endpoint.compare(0, sep, "https") != 0))
      fail(ZT_E_INVALID_ARG, "S3 endpoint '" + redact_url(endpoint) + "' from " + loc.endpoint_source +
                                 " is not an http:// or https:// URL");
    scheme = endpoint.substr(0, sep + 3);
    host = endpoint.substr(sep + 3);
    while (!host.empty() && host.back() == '/') host.pop_back();
    if (host.empty() || host.find_first_of("?#@") != std::string::npos)
      fail(ZT_E_INVALID_ARG, "S3 endpoint '" + redact_url(endpoint) + "' from " + loc.endpoint_source +
                                 " must be scheme://host[:port][/path]");
  }
  bool virtual_hosted = endpoint.empty();
  if (s.s3_addressing == 1) virtual_hosted = false;
  if (s.s3_addressing == 2) virtual_hosted = true;
  if (s.s3_addressing == 0 && loc.bucket.find('.') != std::string::npos) virtual_hosted = false;
  const std::string key = s3_encode_key(loc.key);
  if (virtual_hosted) {
    const size_t path = host.find('/');
    if (path != std::string::npos)
      fail(ZT_E_INVALID_ARG, "S3 endpoint '" + redact_url(endpoint) + "' has a path: use path-style addressing");
    loc.http_url = scheme + loc.bucket + "." + host + "/" + key;
  } else {
    loc.http_url = scheme + host + "/" + loc.bucket + "/" + key;
  }
  return loc;
}

}  // namespace zt
