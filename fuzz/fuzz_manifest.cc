// Fuzz target (white-box): the CBOR tree and the manifest decoder alone,
// without the container around them. Byte 0 selects the container (bit 0:
// legacy 0.1 array) and strict mode (bit 1); the rest is the manifest.
// Only zt::Error may come out, and a decoded model must be self-consistent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "manifest/cbor_tree.h"
#include "manifest/decode.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const uint8_t *m = data + 1;
  const size_t n = size - 1;
  try {
    zt::cbor::Tree tree(m, n, "fuzz");
    // Every node's subtree ends inside the tree and its bytes inside the input.
    for (uint32_t i = 0; i < tree.size(); ++i) {
      const auto &node = tree.node(i);
      if (node.next <= i || node.next > tree.size() || node.begin > node.end || node.end > n) std::abort();
    }
  } catch (const zt::Error &) {
  }
  try {
    zt::DecodeLimits limits;
    limits.strict = (mode & 2) != 0;
    limits.max_decoded_size = uint64_t{1} << 30;
    const uint64_t data_end = uint64_t{1} << 20;  // a 1 MiB blob area
    zt::Manifest man =
        zt::decode_manifest(m, n, (mode & 1) ? zt::Container::V0 : zt::Container::V1, data_end, limits, "fuzz");
    for (const auto &o : man.objects) {
      if (man.find(o.name) != &o) std::abort();
      if (limits.strict && o.status != ZT_OK) std::abort();  // strict refuses any damaged object
      // Components of a damaged object are never read (its status wins),
      // so only those of valid objects must satisfy the placement rules.
      if (o.status != ZT_OK) continue;
      for (const auto &c : o.components) {
        if (c.status != ZT_OK) continue;
        // A component judged valid lies inside the blob area, aligned.
        if (c.offset % 64 != 0 || c.offset < 8 || c.offset + c.length < c.offset || c.offset + c.length > data_end)
          std::abort();
      }
    }
  } catch (const zt::Error &) {
  }
  return 0;
}
