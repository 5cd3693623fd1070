// CBOR manifest → model, for spec 1.x maps and legacy 0.1 arrays, followed by
// the per-component rules of docs/reading-rules.md (manifest/validate.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "container/layout.h"
#include "manifest/model.h"

namespace zt {

struct DecodeLimits {
  uint64_t max_decoded_size = uint64_t{64} << 30;
  bool strict = false;
  // The whole file's size, where an empty blob may point (0: unknown, so it
  // must not point past the manifest's start either).
  uint64_t file_size = 0;
  // Called with each object decoded while the manifest is still being
  // parsed (1.x files whose 'version' precedes 'objects'; the others only
  // once decoded, so never): the prefetch thread starts reading its
  // components meanwhile (src/prefetcher.h). Its fields are unchecked.
  std::function<void(const Object &)> on_early_object;
};

// Root damage throws; object damage is recorded on the object (and thrown
// in strict mode). `data_end` is the manifest's offset in the file.
Manifest decode_manifest(const uint8_t *data, size_t size, Container container, uint64_t data_end,
                         const DecodeLimits &limits, const std::string &path);

// Checks one component against the rules that need no data bytes, filling
// decoded_length; sets status/error on the component.
void validate_component(Component &c, const Object &obj, const Manifest &m, const DecodeLimits &limits);
// Blobs must be identical or disjoint.
void validate_overlaps(Manifest &m);
// Copies the first component failure up to its object.
void settle_object_status(Object &obj);

// Encodes a CBOR map from raw fields (used for legacy custom keys).
std::string encode_raw_map(const std::vector<RawField> &fields);

}  // namespace zt
