#include "v2/rule.h"

#include "util/error.h"

namespace zt::v2 {

const char *rule_name(Rule rule) {
  switch (rule) {
    case Rule::FileTooSmall:
      return "FileTooSmall";
    case Rule::HeaderMagic:
      return "HeaderMagic";
    case Rule::FooterMagic:
      return "FooterMagic";
    case Rule::Version:
      return "Version";
    case Rule::ManifestBounds:
      return "ManifestBounds";
    case Rule::ManifestTooLarge:
      return "ManifestTooLarge";
    case Rule::ManifestHash:
      return "ManifestHash";
    case Rule::CborSyntax:
      return "CborSyntax";
    case Rule::CborDeterminism:
      return "CborDeterminism";
    case Rule::CborDuplicateKey:
      return "CborDuplicateKey";
    case Rule::CborDepth:
      return "CborDepth";
    case Rule::Schema:
      return "Schema";
    case Rule::Name:
      return "Name";
    case Rule::Shape:
      return "Shape";
    case Rule::BlobAlignment:
      return "BlobAlignment";
    case Rule::BlobBounds:
      return "BlobBounds";
    case Rule::BlobOverlap:
      return "BlobOverlap";
    case Rule::ShardRef:
      return "ShardRef";
    case Rule::ShardName:
      return "ShardName";
    case Rule::LayoutRule:
      return "LayoutRule";
    case Rule::LayoutData:
      return "LayoutData";
    case Rule::DenseSize:
      return "DenseSize";
    case Rule::Encoding:
      return "Encoding";
    case Rule::Digest:
      return "Digest";
    case Rule::ShardIdentity:
      return "ShardIdentity";
  }
  return "?";
}

zt_status rule_status(Rule rule) {
  switch (rule) {
    case Rule::FileTooSmall:
      return ZT_E_TRUNCATED;
    case Rule::HeaderMagic:
      return ZT_E_FORMAT;
    case Rule::FooterMagic:
      return ZT_E_FOOTER;
    case Rule::Version:
      return ZT_E_VERSION;
    case Rule::ManifestBounds:
      return ZT_E_MANIFEST_SIZE;
    case Rule::ManifestTooLarge:
      return ZT_E_MANIFEST_LIMIT;
    case Rule::ManifestHash:
      return ZT_E_DIGEST_MISMATCH;
    case Rule::CborSyntax:
      return ZT_E_CBOR;
    case Rule::CborDeterminism:
      return ZT_E_CBOR;
    case Rule::CborDuplicateKey:
      return ZT_E_DUPLICATE_KEY;
    case Rule::CborDepth:
      return ZT_E_CBOR_DEPTH;
    case Rule::Schema:
      return ZT_E_FIELD;
    case Rule::Name:
      return ZT_E_NAME;
    case Rule::Shape:
      return ZT_E_SHAPE;
    case Rule::BlobAlignment:
      return ZT_E_ALIGNMENT;
    case Rule::BlobBounds:
      return ZT_E_BOUNDS;
    case Rule::BlobOverlap:
      return ZT_E_OVERLAP;
    case Rule::ShardRef:
      return ZT_E_FIELD;
    case Rule::ShardName:
      return ZT_E_NAME;
    case Rule::LayoutRule:
      return ZT_E_COMPONENT_MISSING;
    case Rule::LayoutData:
      return ZT_E_VALUE;
    case Rule::DenseSize:
      return ZT_E_LENGTH;
    case Rule::Encoding:
      return ZT_E_CORRUPT;
    case Rule::Digest:
      return ZT_E_DIGEST_MISMATCH;
    case Rule::ShardIdentity:
      return ZT_E_DIGEST_MISMATCH;
  }
  return ZT_E_INTERNAL;
}

std::string rejected(Rule rule, const std::string &detail) {
  return std::string("rejected (") + rule_name(rule) + "): " + detail;
}

void reject(Rule rule, const std::string &detail, zt_status status) {
  fail(status == ZT_OK ? rule_status(rule) : status, rejected(rule, detail));
}

}  // namespace zt::v2
