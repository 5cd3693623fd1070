#include "manifest/encode.h"

#include <algorithm>
#include <string_view>

#include "util/cbor_out.h"

namespace zt {
namespace {

// The manifest is written into one string, `o`.
using cbor::put_map;
using cbor::put_text;
using cbor::put_uint;

// Unknown fields, re-emitted exactly as they were read.
void put_fields(std::string &o, const std::vector<RawField> &extra) {
  for (const auto &f : extra) {
    o += f.key;
    o += f.value;
  }
}

void encode_component(std::string &o, const Component &c) {
  const bool zstd = c.encoding == ZT_ENCODING_ZSTD;
  size_t n = 3 + (c.has_type ? 1 : 0) + (zstd ? 1 : 0) + (c.encoding_name != "raw" ? 1 : 0) + (c.has_digest ? 1 : 0) +
             c.extra.size();
  put_map(o, n);
  put_text(o, "dtype");
  put_text(o, c.dtype_name);
  if (c.has_type) {
    put_text(o, "type");
    put_text(o, c.logical_type);
  }
  put_text(o, "offset");
  put_uint(o, c.offset);
  put_text(o, "length");
  put_uint(o, c.length);
  if (zstd) {
    put_text(o, "uncompressed_length");
    put_uint(o, c.uncompressed_length);
  }
  if (c.encoding_name != "raw") {
    put_text(o, "encoding");
    put_text(o, c.encoding_name);
  }
  if (c.has_digest) {
    put_text(o, "digest");
    put_text(o, c.digest);
  }
  put_fields(o, c.extra);
}

void encode_object(std::string &o, const Object &obj) {
  put_map(o, 3 + (obj.has_attributes ? 1 : 0) + obj.extra.size());
  put_text(o, "shape");
  cbor::put_array(o, obj.shape.size());
  for (uint64_t d : obj.shape) put_uint(o, d);
  put_text(o, "format");
  put_text(o, obj.format);
  if (obj.has_attributes) {
    put_text(o, "attributes");
    o += obj.attributes;
  }
  put_text(o, "components");
  put_map(o, obj.components.size());
  if (obj.components.size() == 1) {  // nearly every object: no sorting, no allocation
    put_text(o, obj.components[0].role);
    encode_component(o, obj.components[0]);
  } else {
    std::vector<const Component *> comps;
    for (const auto &c : obj.components) comps.push_back(&c);
    std::sort(comps.begin(), comps.end(), [](const Component *a, const Component *b) { return a->role < b->role; });
    for (const Component *c : comps) {
      put_text(o, c->role);
      encode_component(o, *c);
    }
  }
  put_fields(o, obj.extra);
}

}  // namespace

std::string encode_manifest(const Manifest &m) {
  std::string o;
  o.reserve(64 + m.objects.size() * 96);
  put_map(o, 2 + (m.has_attributes ? 1 : 0) + m.extra.size());
  put_text(o, "version");
  put_text(o, m.version);
  if (m.has_attributes) {
    put_text(o, "attributes");
    o += m.attributes;
  }
  put_text(o, "objects");
  std::vector<const Object *> objs;
  objs.reserve(m.objects.size());
  for (const auto &ob : m.objects) objs.push_back(&ob);
  // std::string compares bytewise (char_traits<char>::compare is memcmp).
  auto by_name = [](const Object *a, const Object *b) { return a->name < b->name; };
  // Most writers add objects in name order already: one pass instead of a
  // sort that chases every name pointer log n times.
  if (!std::is_sorted(objs.begin(), objs.end(), by_name)) std::sort(objs.begin(), objs.end(), by_name);
  put_map(o, objs.size());
  for (const Object *ob : objs) {
    put_text(o, ob->name);
    encode_object(o, *ob);
  }
  put_fields(o, m.extra);
  return o;
}

}  // namespace zt
