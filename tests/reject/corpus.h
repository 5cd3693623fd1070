// The reject corpus: one small malformed .zt file per reading rule (docs/reading-rules.md),
// each with the exact status the library must give and where it must give it.
// Built with the independent CBOR encoder of tests/support, so the fixtures do
// not depend on the code under test. Used by tests/reject/reject_test.cc, by
// the seed dumper for the fuzzers, and by the sweeps.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ztensor.h"

namespace zttest {

enum class RejectWhere {
  // Container or manifest-root damage: zt_open refuses the file (lenient and
  // strict alike).
  Open,
  // Damage one object's manifest entry shows: the file opens leniently, the
  // object reports `status` (info, read, verify), the others read fine; a
  // strict open refuses the file with `status`.
  Object,
  // Damage only the stored bytes show (digest, zstd frame): both opens
  // succeed; verifying (and, for zstd, reading) the object gives `status`.
  Data,
  // Damage only strict verification looks for (bool bytes, composite
  // structure): lenient verify passes, zt_file_verify(strict=1) gives
  // `status`; a strict open gives OK or `status`.
  StrictVerify,
  // Not damage: the file opens (strictly too) and verifies OK, but
  // zt_component_verify reports ZT_VERIFY_UNVERIFIABLE for the object.
  Unverifiable,
};

struct RejectCase {
  std::string name;   // unique, usable as a file name
  std::string bytes;  // the whole file
  zt_status status;   // the exact expected status
  RejectWhere where;
  std::string object;              // the affected object (not Open)
  bool composite = false;          // a sparse/quantized rule (src/composite/)
  uint64_t max_manifest_size = 0;  // zt_open_options limits; 0 = default
  uint64_t max_decoded_size = 0;
};

// Every case, in a fixed order. Each file except the Open ones also holds a
// valid dense object "good" (f32 [4] = {1, 2, 3, 4}) that must stay readable.
std::vector<RejectCase> reject_corpus();

// Valid files (name, bytes) covering raw, zstd, digests, sparse, quantized
// and legacy 0.1: the seeds of the sweeps and of the fuzzers.
std::vector<std::pair<std::string, std::string>> valid_files();

// The bytes of the object "good" as it decodes: 4 little-endian f32.
std::string good_object_bytes();

const char *reject_where_name(RejectWhere w);

}  // namespace zttest
