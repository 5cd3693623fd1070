// The baseline for cold reads where the original implementation cannot run
// here (it needs the crates registry to build): its read pattern, in plain
// C++. ztensor 1.2.3's Reader::open wraps the file in a BufReader and, per
// tensor, in name order (its objects live in a BTreeMap), seeks and
// read_exact()s the stored bytes into a new Vec; reads larger than the
// BufReader's 8 KiB go straight to read(2). zstd blobs are read the same way
// and decoded with one single-threaded ZSTD_decompress each. Its
// Reader::open_mmap maps the file with no madvise and hands out slices.
// The manifest is parsed by our library (pread access): a few ms of the
// hundreds a cold read takes, the same CBOR either way.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace bench {

// Reads every byte once (8-byte words): what touching a whole tensor costs.
inline uint64_t sum_bytes(const uint8_t *p, size_t len) {
  uint64_t s = 0;
  for (size_t i = 0; i + 8 <= len; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    s += v;
  }
  return s;
}

// Every tensor copied into a new buffer, in name order; returns a checksum
// of one word per tensor (so nothing is optimised away).
uint64_t read_original(const std::string &path);

// Every tensor mapped (read-only, no hints) and every byte of it summed.
uint64_t view_original(const std::string &path);

}  // namespace bench
