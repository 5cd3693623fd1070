// Fuzz target (white-box): the format v2 manifest alone (src/v2/): the
// deterministic-CBOR check, the schema walk and the validation summary,
// with the footer's hash computed here so every input reaches the parser
// (the hash itself is exercised by fuzz_open over whole files). The
// manifest sits at 1 MiB in a file that ends right after it. Only zt::Error
// may come out, and an accepted manifest must obey the rules it passed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "digest/digest.h"
#include "util/error.h"
#include "v2/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint64_t at = uint64_t{1} << 20;
  const uint64_t file_size = at + size + 40;
  try {
    zt::Manifest m = zt::v2::decode_manifest_bytes(data, size, zt::xxh3_64(data, size), at, file_size, "fuzz");
    for (const auto &o : m.objects) {
      if (m.find(o.name) != &o) std::abort();
      if (o.name.empty() || o.name.size() > 1024 || o.components.empty() || o.shape.size() > 64) std::abort();
      for (const auto &c : o.components) {
        if (c.offset % 4096 != 0 || c.offset < 4096) std::abort();
        if (c.shard.empty() && (c.offset > m.data_end || c.length > m.data_end - c.offset)) std::abort();
        // A local blob never reaches into the manifest.
        if (c.shard.empty() && c.length > 0 && c.offset + c.length > at) std::abort();
      }
    }
  } catch (const zt::Error &) {
  }
  return 0;
}
