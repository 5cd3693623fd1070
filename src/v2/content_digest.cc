#include "v2/content_digest.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "digest/digest.h"
#include "util/error.h"
#include "v2/det_cbor_encode.h"

namespace zt::v2 {

namespace {

std::string encoded_text(std::string_view s) {
  DetCbor e;
  e.text(s);
  return std::move(e.out);
}

}  // namespace

std::string content_value(const Manifest &m) {
  if (m.spec != SpecVersion::V2)
    fail(ZT_E_WRONG_FORMAT, "content digest: defined for zTensor v2 files only (spec §6.4)");
  if (m.data_shard) fail(ZT_E_WRONG_FORMAT, "content digest: a data shard has no manifest; ask its root (spec §6.4)");
  // Objects in bytewise name order: the order of their encoded keys too,
  // since a shorter text has a shorter head (§3.1 sorts on encoded keys).
  std::vector<std::pair<std::string, std::string>> objects;
  objects.reserve(m.objects.size());
  std::vector<const Object *> by_name;
  by_name.reserve(m.objects.size());
  for (const Object &o : m.objects) by_name.push_back(&o);
  std::sort(by_name.begin(), by_name.end(), [](const Object *a, const Object *b) { return a->name < b->name; });
  for (const Object *o : by_name) {
    std::vector<const Component *> parts;
    for (const Component &c : o->components) parts.push_back(&c);
    std::sort(parts.begin(), parts.end(), [](const Component *a, const Component *b) { return a->role < b->role; });
    std::vector<std::pair<std::string, std::string>> part_entries;
    for (const Component *c : parts) {
      if (!c->has_digest)
        fail(ZT_E_UNSUPPORTED, "content digest: object '" + o->name + "' part '" + c->role +
                                   "' carries no digest, so this model has no content digest (spec §6.4)");
      std::vector<std::pair<std::string, std::string>> fields;
      fields.emplace_back(encoded_text("dtype"), encoded_text(c->dtype_name));
      if (c->has_type) fields.emplace_back(encoded_text("type"), encoded_text(c->logical_type));
      fields.emplace_back(encoded_text("digest"), encoded_text(c->digest));
      DetCbor p;
      emit_sorted_map(p, fields, "content digest part");
      part_entries.emplace_back(encoded_text(c->role), std::move(p.out));
    }
    std::vector<std::pair<std::string, std::string>> fields;
    DetCbor shape;
    shape.array(o->shape.size());
    for (uint64_t d : o->shape) shape.uint(d);
    fields.emplace_back(encoded_text("shape"), std::move(shape.out));
    fields.emplace_back(encoded_text("layout"), encoded_text(o->format));
    // Attributes were checked deterministic when the manifest was read.
    if (o->has_attributes) fields.emplace_back(encoded_text("attributes"), o->attributes);
    DetCbor pm;
    emit_sorted_map(pm, part_entries, "content digest parts of '" + o->name + "'");
    fields.emplace_back(encoded_text("parts"), std::move(pm.out));
    DetCbor ob;
    emit_sorted_map(ob, fields, "content digest object");
    objects.emplace_back(encoded_text(o->name), std::move(ob.out));
  }
  DetCbor v;
  v.array(2);
  v.text("zt.content/1");
  emit_sorted_map(v, objects, "content digest objects");
  return std::move(v.out);
}

std::string content_digest(const Manifest &m, zt_digest_alg alg) {
  if (alg != ZT_DIGEST_XXH3 && alg != ZT_DIGEST_SHA256)
    fail(ZT_E_INVALID_ARG,
         "content digest: algorithm " + std::to_string(static_cast<int>(alg)) + " is not xxh3 or sha256");
  const std::string value = content_value(m);
  return digest_string(alg, value.data(), value.size());
}

}  // namespace zt::v2
