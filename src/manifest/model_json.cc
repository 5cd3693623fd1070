#include "manifest/model_json.h"

#include "manifest/decode.h"
#include "manifest/json.h"
#include "types/dtype.h"

namespace zt {
namespace {

void kv(std::string &out, const char *key, const std::string &json_value, bool &first) {
  if (!first) out += ',';
  first = false;
  json_escape(out, key);
  out += ':';
  out += json_value;
}

std::string str(const std::string &s) {
  std::string o;
  json_escape(o, s);
  return o;
}

std::string extra_json(const std::vector<RawField> &extra) {
  if (extra.empty()) return "null";
  return cbor_to_json(encode_raw_map(extra));
}

}  // namespace

std::string manifest_to_json(const Manifest &m) {
  std::string out = "{";
  bool first = true;
  // A foreign file has no zTensor spec version; its format is named instead.
  kv(out, "version", m.foreign.empty() ? str(m.version) : "null", first);
  if (!m.foreign.empty()) kv(out, "source_format", str(m.foreign), first);
  kv(out, "attributes", m.has_attributes ? cbor_to_json(m.attributes) : "null", first);
  if (!m.extra.empty()) kv(out, "extra", extra_json(m.extra), first);
  if (m.spec == SpecVersion::V2) {
    // Format v2: a data shard says so; a root lists its shard table (§7.1).
    if (m.data_shard) kv(out, "data_shard", "true", first);
    if (!m.shards.empty()) {
      std::string t = "{";
      for (size_t i = 0; i < m.shards.size(); ++i)
        t += (i ? "," : "") + str(m.shards[i].name) + ":{\"size\":" + std::to_string(m.shards[i].size) +
             ",\"digest\":" + str(m.shards[i].digest) + "}";
      kv(out, "shards", t + "}", first);
    }
  }
  out += ",\"objects\":[";
  for (size_t i = 0; i < m.objects.size(); ++i) {
    const Object &o = m.objects[i];
    if (i) out += ',';
    out += '{';
    bool f = true;
    kv(out, "name", str(o.name), f);
    std::string shape = "[";
    for (size_t k = 0; k < o.shape.size(); ++k) shape += (k ? "," : "") + std::to_string(o.shape[k]);
    kv(out, "shape", shape + "]", f);
    kv(out, "format", o.has_format ? str(o.format) : "null", f);
    kv(out, "attributes", o.has_attributes ? cbor_to_json(o.attributes) : "null", f);
    if (!o.extra.empty()) kv(out, "extra", extra_json(o.extra), f);
    kv(out, "status", std::to_string(o.status), f);
    if (o.status != ZT_OK) kv(out, "error", str(o.error), f);
    out += ",\"components\":[";
    for (size_t j = 0; j < o.components.size(); ++j) {
      const Component &c = o.components[j];
      if (j) out += ',';
      out += '{';
      bool g = true;
      kv(out, "role", str(c.role), g);
      kv(out, "dtype", str(c.dtype_name), g);
      kv(out, "type", c.has_type ? str(c.logical_type) : "null", g);
      kv(out, "encoding", str(c.encoding_name), g);
      kv(out, "offset", m.foreign_decoded ? "null" : std::to_string(c.offset), g);  // not in the file
      kv(out, "length", std::to_string(c.length), g);
      if (m.spec == SpecVersion::V2) {
        // v2's own names: "blob" is [offset, length], "shard" the file the
        // blob is in (absent: this one); "decoded_length" below is the
        // part's decoded size (its field, or the blob's length when raw).
        kv(out, "blob", "[" + std::to_string(c.offset) + "," + std::to_string(c.length) + "]", g);
        if (!c.shard.empty()) kv(out, "shard", str(c.shard), g);
      } else {
        kv(out, "uncompressed_length", c.has_uncompressed_length ? std::to_string(c.uncompressed_length) : "null", g);
      }
      kv(out, "decoded_length", c.decoded_known ? std::to_string(c.decoded_length) : "null", g);
      kv(out, "digest", c.has_digest ? str(c.digest) : "null", g);
      if (c.big_endian) kv(out, "big_endian", "true", g);
      if (!c.extra.empty()) kv(out, "extra", extra_json(c.extra), g);
      kv(out, "status", std::to_string(c.status), g);
      if (c.status != ZT_OK) kv(out, "error", str(c.error), g);
      out += '}';
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace zt
