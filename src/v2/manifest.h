// Format v2 manifest (spec §3.1-§3.5, §7.1) → the one model of
// src/manifest/model.h: the XXH3-64 check, the deterministic-CBOR check
// (det_cbor.h), the schema walk (fields, types, names, shapes, parts, the
// shard table; unknown keys are kept as extra fields and otherwise
// ignored), then the validation summary (validate.h). A v2 object is an
// Object whose format is its layout id as written; each part is a
// Component whose role is the part's name (docs/v2.md).
#pragma once

#include <string>

#include "container/layout.h"
#include "container/source.h"
#include "manifest/model.h"

namespace zt::v2 {

// Reads and checks the manifest `loc` points at (loc.container ==
// Container::V2; a data shard gives a manifest with no objects and
// data_shard set). Every rule broken throws a rejection naming it.
Manifest read_manifest(const Source &src, const ManifestLocation &loc);

// The same over manifest bytes already in memory; file_size is the whole
// file's (the data region ends 40 bytes before it). For fuzzing and tests.
Manifest decode_manifest_bytes(const uint8_t *data, size_t size, uint64_t hash, uint64_t manifest_offset,
                               uint64_t file_size, const std::string &path);

}  // namespace zt::v2
