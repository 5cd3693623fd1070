// Helpers shared by the tests: temporary directories, whole-file I/O, SHA-256
// of bytes (via OpenSSL, the reference hash for expected.json; Windows' CNG
// in the Windows builds, docs/cross.md).
#pragma once

#ifdef _WIN32
#include <windows.h>
// windows.h first: bcrypt.h needs its types.
#include <bcrypt.h>

#include <filesystem>
#else
#include <openssl/sha.h>
#include <unistd.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace zttest {

// The library hands elements over in the host's byte order; expected.json
// and files hold them little-endian. On a big-endian host (s390x, see
// docs/cross.md) the tests turn what they read back into little-endian
// bytes before comparing hashes.
constexpr bool kHostBigEndian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

inline std::vector<uint8_t> host_to_le(const void *data, size_t len, size_t elem_size) {
  const auto *p = static_cast<const uint8_t *>(data);
  std::vector<uint8_t> v(p, p + len);
  if (kHostBigEndian && elem_size > 1)
    for (size_t i = 0; i + elem_size <= len; i += elem_size)
      for (size_t a = i, b = i + elem_size - 1; a < b; ++a, --b) std::swap(v[a], v[b]);
  return v;
}

inline std::string sha256_hex(const void *data, size_t len) {
#ifdef _WIN32
  unsigned char md[32] = {};
  BCRYPT_ALG_HANDLE alg = nullptr;
  BCRYPT_HASH_HANDLE h = nullptr;
  if (BCryptOpenAlgorithmProvider(&alg, BCRYPT_SHA256_ALGORITHM, nullptr, 0) < 0 ||
      BCryptCreateHash(alg, &h, nullptr, 0, nullptr, 0, 0) < 0 ||
      BCryptHashData(h, static_cast<PUCHAR>(const_cast<void *>(data)), static_cast<ULONG>(len), 0) < 0 ||
      BCryptFinishHash(h, md, 32, 0) < 0) {
    fprintf(stderr, "CNG SHA-256 failed\n");
    std::abort();
  }
  BCryptDestroyHash(h);
  BCryptCloseAlgorithmProvider(alg, 0);
#else
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(static_cast<const unsigned char *>(data), len, md);
#endif
  static const char *hex = "0123456789abcdef";
  std::string s;
  for (unsigned char b : md) {
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// The stored (little-endian) bytes of host-order numbers: what a test that
// crafts a file byte by byte puts in it.
template <typename T>
std::string le_bytes(const std::vector<T> &v) {
  std::vector<uint8_t> b = host_to_le(v.data(), v.size() * sizeof(T), sizeof(T));
  return std::string(b.begin(), b.end());
}

// Little-endian bytes as the API takes them (the same swap, other way).
inline std::vector<uint8_t> le_to_host(const void *data, size_t len, size_t elem_size) {
  return host_to_le(data, len, elem_size);
}

// SHA-256 of host-order elements as they are stored (little-endian).
inline std::string sha256_le_hex(const void *data, size_t len, size_t elem_size) {
  std::vector<uint8_t> le = host_to_le(data, len, elem_size);
  return sha256_hex(le.data(), le.size());
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
#ifdef _WIN32
  // %TEMP%\zt-test-<pid>-<n>, named in UTF-8 with '/' separators (the
  // library takes UTF-8 paths on every platform).
  TempDir() {
    static int n = 0;
    namespace fs = std::filesystem;
    const fs::path p =
        fs::temp_directory_path() / ("zt-test-" + std::to_string(GetCurrentProcessId()) + "-" + std::to_string(n++));
    std::error_code ec;
    fs::remove_all(p, ec);
    if (fs::create_directory(p, ec)) path_ = p.generic_u8string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(std::filesystem::u8path(path_), ec);
  }
#else
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
#endif
  std::string file(const std::string &name) const {
    return path_ + "/" + name;
  }
  const std::string &path() const {
    return path_;
  }

 private:
  std::string path_;
};

inline std::string env_or(const char *name, const std::string &def) {
  const char *v = std::getenv(name);
  return v && *v ? v : def;
}

// The interop vectors (tests/data/interop, written by the original
// implementation). They ship with the repo, so a missing folder is a broken
// checkout or a wrong -Dinterop_dir: fail loudly with the path, never skip and
// never hand an empty string to a JSON parser.
inline std::string interop_dir() {
  const char *v = std::getenv("ZT_INTEROP_DIR");
  std::string dir = v && *v ? v : std::string();
  if (dir.empty()) {
    fprintf(stderr,
            "ZT_INTEROP_DIR is not set: run the tests through 'meson test' (it points at tests/data/interop)\n");
    std::abort();
  }
  std::ifstream probe(dir + "/v1/expected.json", std::ios::binary);
  if (!probe) {
    fprintf(stderr, "interop vectors missing: cannot open '%s/v1/expected.json' (ZT_INTEROP_DIR)\n", dir.c_str());
    std::abort();
  }
  return dir;
}

// Whole file, or abort naming it: for data the tests cannot do without.
inline std::string read_required_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fprintf(stderr, "cannot open required test data '%s'\n", path.c_str());
    std::abort();
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace zttest
