// Writes fuzz seeds generated from the reject corpus and the valid files of
// tests/reject/corpus.cc: whole files for fuzz_open, and each file's
// manifest (behind the mode byte of fuzz_manifest) for fuzz_manifest.
// Usage: dump_seeds OUT_DIR STAMP_FILE
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "corpus.h"

namespace {

void write(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The manifest of a file, found through its size field; "" if not locatable.
std::string manifest_of(const std::string &f, bool &legacy) {
  legacy = f.compare(0, 8, "ZTEN0001") == 0;
  const size_t tail = legacy ? 8 : 16;
  if (f.size() < tail + 8) return "";
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | static_cast<uint8_t>(f[f.size() - tail + i]);
  if (size > f.size() - tail - 8) return "";
  return f.substr(f.size() - tail - size, size);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR STAMP_FILE\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  ::mkdir(out.c_str(), 0755);
  ::mkdir((out + "/open").c_str(), 0755);
  ::mkdir((out + "/manifest").c_str(), 0755);
  size_t n = 0;
  auto emit = [&](const std::string &name, const std::string &bytes) {
    write(out + "/open/" + name + ".zt", bytes);
    bool legacy = false;
    std::string m = manifest_of(bytes, legacy);
    if (!m.empty()) {
      write(out + "/manifest/" + name + ".lenient", std::string(1, legacy ? '\x01' : '\x00') + m);
      write(out + "/manifest/" + name + ".strict", std::string(1, legacy ? '\x03' : '\x02') + m);
    }
    ++n;
  };
  for (const auto &c : zttest::reject_corpus()) emit("reject_" + c.name, c.bytes);
  for (const auto &v : zttest::valid_files()) emit("valid_" + v.first, v.second);
  write(argv[2], std::to_string(n) + " seeds\n");
  return 0;
}
