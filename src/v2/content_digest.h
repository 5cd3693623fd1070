// The content digest of a v2 model (spec §6.4): a digest over a
// deterministic-CBOR value holding each object's shape, layout, attributes
// and each part's dtype, logical type and digest, and nothing about layout
// (offsets, alignment, blob sharing, encodings, shards). The same tensors
// give the same answer in one file or many, at 4 KiB or 64 KiB, raw or
// compressed. Computed from the manifest alone; never stored in a file.
#pragma once

#include <string>

#include "manifest/model.h"
#include "ztensor.h"

namespace zt::v2 {

// The CBOR value of §6.4, encoded deterministically. Throws
// ZT_E_UNSUPPORTED naming the first part (in bytewise name order) that
// carries no digest: the content digest is then undefined, never
// approximated. ZT_E_WRONG_FORMAT for a file that is not v2, or a data shard
// (no manifest).
std::string content_value(const Manifest &m);

// "<alg>:<hex>" of content_value(m); alg is ZT_DIGEST_XXH3 or
// ZT_DIGEST_SHA256 (else ZT_E_INVALID_ARG).
std::string content_digest(const Manifest &m, zt_digest_alg alg);

}  // namespace zt::v2
