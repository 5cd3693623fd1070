#include "manifest/encode.h"

#include <cbor.h>

#include <algorithm>
#include <string_view>

namespace zt {
namespace {

class Out {
 public:
  std::string s;
  void head(size_t (*enc)(uint64_t, unsigned char *, size_t), uint64_t v) {
    unsigned char b[9];
    s.append(reinterpret_cast<char *>(b), enc(v, b, sizeof b));
  }
  void map(size_t n) {
    head([](uint64_t v, unsigned char *b, size_t l) { return cbor_encode_map_start(v, b, l); }, n);
  }
  void array(size_t n) {
    head([](uint64_t v, unsigned char *b, size_t l) { return cbor_encode_array_start(v, b, l); }, n);
  }
  void uint(uint64_t v) { head(cbor_encode_uint, v); }
  void text(std::string_view t) {
    head([](uint64_t v, unsigned char *b, size_t l) { return cbor_encode_string_start(v, b, l); }, t.size());
    s.append(t.data(), t.size());
  }
  void raw(const std::string &r) { s += r; }
  // Unknown fields, re-emitted exactly as they were read.
  void fields(const std::vector<RawField> &extra) {
    for (const auto &f : extra) {
      s += f.key;
      s += f.value;
    }
  }
};

void encode_component(Out &o, const Component &c) {
  const bool zstd = c.encoding == ZT_ENCODING_ZSTD;
  size_t n = 3 + (c.has_type ? 1 : 0) + (zstd ? 1 : 0) + (c.encoding_name != "raw" ? 1 : 0) + (c.has_digest ? 1 : 0) +
             c.extra.size();
  o.map(n);
  o.text("dtype");
  o.text(c.dtype_name);
  if (c.has_type) {
    o.text("type");
    o.text(c.logical_type);
  }
  o.text("offset");
  o.uint(c.offset);
  o.text("length");
  o.uint(c.length);
  if (zstd) {
    o.text("uncompressed_length");
    o.uint(c.uncompressed_length);
  }
  if (c.encoding_name != "raw") {
    o.text("encoding");
    o.text(c.encoding_name);
  }
  if (c.has_digest) {
    o.text("digest");
    o.text(c.digest);
  }
  o.fields(c.extra);
}

void encode_object(Out &o, const Object &obj) {
  o.map(3 + (obj.has_attributes ? 1 : 0) + obj.extra.size());
  o.text("shape");
  o.array(obj.shape.size());
  for (uint64_t d : obj.shape) o.uint(d);
  o.text("format");
  o.text(obj.format);
  if (obj.has_attributes) {
    o.text("attributes");
    o.raw(obj.attributes);
  }
  o.text("components");
  o.map(obj.components.size());
  if (obj.components.size() == 1) {  // nearly every object: no sorting, no allocation
    o.text(obj.components[0].role);
    encode_component(o, obj.components[0]);
  } else {
    std::vector<const Component *> comps;
    for (const auto &c : obj.components) comps.push_back(&c);
    std::sort(comps.begin(), comps.end(), [](const Component *a, const Component *b) { return a->role < b->role; });
    for (const Component *c : comps) {
      o.text(c->role);
      encode_component(o, *c);
    }
  }
  o.fields(obj.extra);
}

}  // namespace

std::string encode_manifest(const Manifest &m) {
  Out o;
  o.s.reserve(64 + m.objects.size() * 96);
  o.map(2 + (m.has_attributes ? 1 : 0) + m.extra.size());
  o.text("version");
  o.text(m.version);
  if (m.has_attributes) {
    o.text("attributes");
    o.raw(m.attributes);
  }
  o.text("objects");
  std::vector<const Object *> objs;
  objs.reserve(m.objects.size());
  for (const auto &ob : m.objects) objs.push_back(&ob);
  // std::string compares bytewise (char_traits<char>::compare is memcmp).
  auto by_name = [](const Object *a, const Object *b) { return a->name < b->name; };
  // Most writers add objects in name order already: one pass instead of a
  // sort that chases every name pointer log n times.
  if (!std::is_sorted(objs.begin(), objs.end(), by_name)) std::sort(objs.begin(), objs.end(), by_name);
  o.map(objs.size());
  for (const Object *ob : objs) {
    o.text(ob->name);
    encode_object(o, *ob);
  }
  o.fields(m.extra);
  return std::move(o.s);
}

}  // namespace zt
