#include "v2/canonical.h"

#include <algorithm>
#include <map>
#include <utility>

#include "util/error.h"
#include "v2/nfc.h"

namespace zt::v2 {

namespace {

constexpr uint64_t kCanonicalAlign = 65536;
constexpr uint64_t kMagicSize = 8;
constexpr uint64_t kFooterSize = 40;

// The next canonical boundary at or after `v`; false past the end of u64.
bool align_up(uint64_t v, uint64_t *out) {
  if (v > UINT64_MAX - (kCanonicalAlign - 1)) return false;
  *out = (v + kCanonicalAlign - 1) & ~(kCanonicalAlign - 1);
  return true;
}

bool is_ascii(const std::string &s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::string label(const Object &o, const Component &c) {
  return "'" + printable(o.name) + "'/'" + printable(c.role) + "'";
}

}  // namespace

std::vector<CanonicalViolation> canonical_violations(const Manifest &m, const Placement &at) {
  std::vector<CanonicalViolation> bad;
  auto add = [&](unsigned rule, const std::string &text) {
    bad.push_back({rule, "rule " + std::to_string(rule) + ": " + text});
  };
  if (m.data_shard) {
    add(1, "a data shard has no manifest blob; canonical form is a model with exactly one");
    return bad;
  }
  // Rule 6 first: with a shard table, parts may point elsewhere and the
  // placement walk below describes only this file.
  if (!m.shards.empty())
    add(6, "canonical form is single-file, but the manifest declares " + std::to_string(m.shards.size()) + " shard(s)");

  // Bytewise (object, part) name order: rule 3's order. The manifest's own
  // order is its CBOR key order, which sorts shorter names first.
  std::vector<const Object *> objects;
  objects.reserve(m.objects.size());
  for (const Object &o : m.objects) objects.push_back(&o);
  std::sort(objects.begin(), objects.end(), [](const Object *a, const Object *b) { return a->name < b->name; });

  // Rule 5. ASCII is NFC by construction.
  for (const Object *o : objects) {
    if (!is_ascii(o->name) && !is_nfc(o->name)) add(5, "object name '" + printable(o->name) + "' is not in NFC");
    for (const Component &c : o->components)
      if (!is_ascii(c.role) && !is_nfc(c.role))
        add(5, "part name '" + printable(c.role) + "' of '" + printable(o->name) + "' is not in NFC");
  }

  // Rules 1-4 in one walk over the parts in rule 3's order.
  uint64_t cursor = kMagicSize;
  std::map<uint64_t, uint64_t> placed;                              // offset → length (non-empty blobs)
  std::map<std::pair<std::string, uint64_t>, uint64_t> by_content;  // (digest, length) → offset
  // Every blob start in this file: a blob found where another should be is
  // an order problem (rule 3), not a gap (rule 1).
  std::map<uint64_t, int> starts;
  for (const Object &o : m.objects)
    for (const Component &c : o.components)
      if (c.shard.empty() && c.length > 0) starts.emplace(c.offset, 0);
  bool misplaced = false;  // a rule 2 or 3 placement miss: later positions follow from it
  bool have_empty = false;
  uint64_t empty_at = 0;
  bool overflow = false;
  for (const Object *o : objects) {
    std::vector<const Component *> parts;
    for (const Component &c : o->components) parts.push_back(&c);
    std::sort(parts.begin(), parts.end(), [](const Component *a, const Component *b) { return a->role < b->role; });
    for (const Component *c : parts) {
      const std::string where = label(*o, *c);
      if (c->has_uncompressed_length)
        add(4, where + " is stored under the encoding '" + printable(c->encoding_name) + "'");
      if (!c->has_digest)
        add(4, where + " carries no digest");
      else if (c->digest.rfind("xxh3:", 0) != 0)
        add(4, where + " has a '" + printable(c->digest) + "' digest, not xxh3");
      if (!c->shard.empty() || overflow) continue;  // rule 6 accounts for other files

      const uint64_t offset = c->offset, length = c->length;
      uint64_t expected = 0;
      if (!align_up(cursor, &expected)) {
        add(2, where + " places a blob past the end of the 64-bit offsets");
        overflow = true;
        continue;
      }
      if (length == 0) {
        // A zero-length blob takes no room: our writer (like the original's)
        // puts it at the next boundary, where the next blob starts too, and
        // every empty part shares the first one's blob (docs/v2.md).
        if (offset % kCanonicalAlign != 0)
          add(2, where + " is at offset " + std::to_string(offset) + ", which is not a multiple of 65536");
        else if (have_empty && offset != empty_at)
          add(3, where + " is empty at offset " + std::to_string(offset) +
                     " instead of sharing the empty blob already at " + std::to_string(empty_at));
        else if (!have_empty && offset != expected)
          add(3, where + " is an empty blob at " + std::to_string(offset) + ", not at the " + std::to_string(expected) +
                     " that its place in (object, part) order gives it");
        if (!have_empty) {
          have_empty = true;
          empty_at = offset;
        }
        continue;
      }
      auto p = placed.find(offset);
      if (p != placed.end()) {
        // Sharing a blob already placed: legal, and it must be the same one.
        if (p->second != length)
          add(3, where + " shares offset " + std::to_string(offset) + " with a blob of a different length");
        continue;
      }
      if (c->has_digest) {
        auto key = std::make_pair(c->digest, length);
        auto f = by_content.find(key);
        if (f != by_content.end())
          add(3, where + " repeats the content already at offset " + std::to_string(f->second) +
                     " instead of sharing that blob");
        else
          by_content.emplace(std::move(key), offset);
      }
      // Each way of missing the expected offset is a different rule.
      if (offset % kCanonicalAlign != 0) {
        add(2, where + " is at offset " + std::to_string(offset) + ", which is not a multiple of 65536");
        misplaced = true;
      } else if (offset > expected && !misplaced && starts.count(expected) == 0) {
        add(1, std::to_string(offset - expected) + " bytes before " + where + " at " + std::to_string(offset) +
                   " belong to nothing; canonical form packs blobs with no gaps");
      } else if (offset != expected) {
        add(3, where + " is at " + std::to_string(offset) + ", not at the " + std::to_string(expected) +
                   " that its place in (object, part) order gives it");
        misplaced = true;
      }
      placed.emplace(offset, length);
      cursor = std::max(cursor, offset + length);
    }
  }

  // The manifest comes straight after the last blob, the footer straight
  // after it: a gap is room for something unreferenced (an old manifest
  // left by an append, say), which rule 1 forbids.
  // Before that end, the manifest was displaced by blobs already reported.
  uint64_t expected = 0;
  if (!overflow && align_up(cursor, &expected) && at.manifest_offset > expected)
    add(1, "the manifest is at " + std::to_string(at.manifest_offset) + ", but the blobs end at " +
               std::to_string(expected) + "; the space between belongs to nothing");
  else if (!overflow && !misplaced && at.manifest_offset < expected)
    add(2, "the manifest is at " + std::to_string(at.manifest_offset) + ", not at the 64 KiB boundary " +
               std::to_string(expected) + " after the last blob");
  if (at.manifest_offset + at.manifest_size + kFooterSize != at.file_size)
    add(3, "the footer does not immediately follow the manifest (manifest ends at " +
               std::to_string(at.manifest_offset + at.manifest_size) + ", file is " + std::to_string(at.file_size) +
               ")");
  return bad;
}

}  // namespace zt::v2
