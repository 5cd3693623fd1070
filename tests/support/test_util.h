// Helpers shared by the tests: temporary directories, whole-file I/O, SHA-256
// of bytes (via OpenSSL, the reference hash for expected.json).
#pragma once

#include <openssl/sha.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace zttest {

inline std::string sha256_hex(const void *data, size_t len) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(static_cast<const unsigned char *>(data), len, md);
  static const char *hex = "0123456789abcdef";
  std::string s;
  for (unsigned char b : md) {
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

inline std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A fresh directory removed (with its files) at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (getenv("TMPDIR") ? std::string(getenv("TMPDIR")) : std::string("/tmp")) + "/zt-test-XXXXXX";
    path_ = mkdtemp(&tmpl[0]) ? tmpl : std::string();
  }
  ~TempDir() {
    if (!path_.empty()) {
      std::string cmd = "rm -rf '" + path_ + "'";
      int rc = std::system(cmd.c_str());
      (void)rc;
    }
  }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

inline std::string env_or(const char *name, const std::string &def) {
  const char *v = std::getenv(name);
  return v && *v ? v : def;
}

}  // namespace zttest
