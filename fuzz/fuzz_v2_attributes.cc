// Fuzz target (white-box): the v2 writer's re-encoding of caller CBOR
// (src/v2/det_cbor_encode.*). Byte 0: the depth the item sits at (low 5
// bits) and whether it must be an attribute map (bit 6); the rest is the
// item. Only zt::Error may come out; what comes out otherwise must be
// deterministic CBOR: one item our own parser reads, and a fixed point of
// the re-encoding (the same bytes when re-encoded again).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "manifest/cbor_tree.h"
#include "util/error.h"
#include "v2/det_cbor_encode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const unsigned depth = data[0] & 31;
  const bool attributes = (data[0] & 64) != 0;
  std::string out;
  try {
    out = zt::v2::canonical_cbor(data + 1, size - 1, depth, attributes, "fuzz");
  } catch (const zt::Error &) {
    return 0;
  }
  const auto *p = reinterpret_cast<const uint8_t *>(out.data());
  try {
    zt::cbor::Tree tree(p, out.size(), "fuzz output");
    if (attributes && tree.node(tree.root()).kind != zt::cbor::Kind::Map) std::abort();
  } catch (const zt::Error &) {
    std::abort();  // the writer produced CBOR a reader refuses
  }
  try {
    if (zt::v2::canonical_cbor(p, out.size(), depth, attributes, "fuzz again") != out) std::abort();
  } catch (const zt::Error &) {
    std::abort();
  }
  return 0;
}
