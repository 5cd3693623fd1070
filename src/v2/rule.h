// The rules of zTensor format v2 (spec/ztensor-v2-spec.md, "Draft 4"), named
// as the original implementation's `Rule` enum names them
// (ztensor/src/error.rs), so a rejection says which rule in words its
// conformance corpus uses. Each maps onto one of our zt_status codes
// (docs/v2.md has the table); the message carries the rule's name:
// "'model.zt': rejected (ManifestHash): ...".
#pragma once

#include <string>

#include "ztensor.h"

namespace zt::v2 {

enum class Rule {
  FileTooSmall,      // §2.1: shorter than magic + footer (48 bytes)
  HeaderMagic,       // §2.2
  FooterMagic,       // §2.2
  Version,           // §2.3: footer version not 2
  ManifestBounds,    // §2.3/§7.2: manifest outside the data region, or a data shard footer not all zero
  ManifestTooLarge,  // §3.1: manifest_length above 1 GiB
  ManifestHash,      // §2.3: XXH3-64 of the manifest differs from the footer's
  CborSyntax,        // not well-formed CBOR (also: tags, indefinite lengths, trailing bytes)
  CborDeterminism,   // §3.1: non-shortest head, unsorted keys, non-canonical float
  CborDuplicateKey,  // §3.1
  CborDepth,         // §3.1: nesting deeper than 32 from the manifest root
  Schema,            // §3: a field missing, of the wrong type, or out of range
  Name,              // §3.5
  Shape,             // §3.3: rank above 64, or the element product overflows
  BlobAlignment,     // §2.4: offset not a multiple of 4096, or below 4096
  BlobBounds,        // §2.4: blob past the file's data region
  BlobOverlap,       // §2.4: two blobs of one file partially overlap
  ShardRef,          // §7.1: a part names a shard the table does not declare
  ShardName,         // §7.1: a shard name outside [A-Za-z0-9._-], empty, or starting with '.'
  LayoutRule,        // §5.2: object metadata breaks its layout profile
  LayoutData,        // data breaks a profile or logical type (CSR indptr, bool bytes, f4 padding)
  DenseSize,         // §5.1: decoded size is not the size function of the element count
  Encoding,          // stored bytes break their encoding profile
  Digest,            // §3.4: bytes do not hash to the part's digest
  ShardIdentity,     // §7.3: a resolved shard is not the file the root names
};

// "ManifestHash", ...
const char *rule_name(Rule rule);

// The status a rejection under `rule` returns when no more precise one is
// given (docs/v2.md, "Rules and statuses").
zt_status rule_status(Rule rule);

// "rejected (<Rule>): <detail>".
std::string rejected(Rule rule, const std::string &detail);

// Throws zt::Error(status, "<prefix>rejected (<Rule>): <detail>"); status
// ZT_OK means rule_status(rule).
[[noreturn]] void reject(Rule rule, const std::string &detail, zt_status status = ZT_OK);

}  // namespace zt::v2
