// The v2 writer's manifest (v2_writer.h): the object model encoded in
// deterministic CBOR (v2 spec §3.1) in one pass. Map keys sort bytewise on
// their encoded form, and a text head grows with the text's length, so
// keys sort by (length, bytes): the fixed keys are written in that order
// as constants, and object and part names are sorted by it. Nothing is
// allocated per object: a manifest of 100k objects is one string.
#include <algorithm>
#include <numeric>

#include "util/error.h"
#include "v2/det_cbor_encode.h"
#include "v2/quant_group_1x.h"
#include "v2/v2_writer.h"

namespace zt::v2 {
namespace {

constexpr const char *kSeekable = "zt.zstd-seekable/1";

// Deterministic CBOR order of two text keys (RFC 8949 §4.2.1).
bool key_less(const std::string &a, const std::string &b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// Indices of `items` in key order of name(item).
template <typename T, typename Name>
std::vector<size_t> key_order(const std::vector<T> &items, Name name) {
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto less = [&](size_t a, size_t b) { return key_less(name(items[a]), name(items[b])); };
  if (!std::is_sorted(order.begin(), order.end(), less)) std::sort(order.begin(), order.end(), less);
  return order;
}

}  // namespace

std::string Writer::encode_manifest() const {
  DetCbor c;
  c.out.reserve(64 + objects_.size() * 160 + attributes_.size());
  c.map(attributes_.empty() ? 1 : 2);
  c.text("objects");  // "objects" (7 bytes) before "attributes" (10)
  c.map(objects_.size());
  for (size_t oi : key_order(objects_, [](const Object &o) -> const std::string & { return o.name; })) {
    const Object &o = objects_[oi];
    c.text(o.name);
    c.map(o.attributes.empty() ? 3 : 4);  // parts, shape, layout, attributes
    c.text("parts");
    c.map(o.parts.size());
    for (size_t pi : key_order(o.parts, [](const Part &p) -> const std::string & { return p.name; })) {
      const Part &p = o.parts[pi];
      const Blob &b = blobs_[p.blob];
      c.text(p.name);
      // blob, type, dtype, digest, encoding, decoded_length
      c.map(2 + !p.type.empty() + !p.digest.empty() + (p.encoded ? 2 : 0));
      c.text("blob");
      c.array(2);
      c.uint(b.offset);
      c.uint(b.length);
      if (!p.type.empty()) {
        c.text("type");
        c.text(p.type);
      }
      c.text("dtype");
      c.text(p.dtype);
      if (!p.digest.empty()) {
        c.text("digest");
        c.text(p.digest);
      }
      if (p.encoded) {
        c.text("encoding");
        c.text(kSeekable);
        c.text("decoded_length");
        c.uint(p.decoded_length);
      }
    }
    c.text("shape");
    c.array(o.shape.size());
    for (uint64_t d : o.shape) c.uint(d);
    c.text("layout");
    c.text(o.layout);
    if (!o.attributes.empty()) {
      c.text("attributes");
      c.raw(o.attributes);
    }
  }
  if (!attributes_.empty()) {
    c.text("attributes");
    c.raw(attributes_);
  }
  return std::move(c.out);
}

// A 1.x quantized_group object becomes zt.quant_group/1: its packed part is
// "data" (1.x: "packed_weight"), and its attributes state every parameter.
// The parts keep their relative name order, so the placement stands.
void Writer::restate_quantized(Object &o) {
  QuantGroup1x q;
  q.attributes = o.attributes;
  q.shape = o.shape;
  Part *data = nullptr, *scales = nullptr;
  for (Part &p : o.parts) {
    if (p.name == "packed_weight" || p.name == "data") {
      if (data) fail(ZT_E_UNSUPPORTED, where(o.name) + ": both 'packed_weight' and 'data' parts");
      data = &p;
    } else if (p.name == "scales") {
      scales = &p;
    } else if (p.name == "zeros") {
      q.has_zeros = true;
    } else {
      fail(ZT_E_UNSUPPORTED, where(o.name, p.name) + ": not a part of a quantized_group object");
    }
  }
  if (!data || !scales)
    fail(ZT_E_COMPONENT_MISSING, where(o.name) + ": a quantized_group object needs packed_weight and scales");
  q.data_dtype = data->dtype;
  q.scales_dtype = scales->dtype;
  q.scales_type = scales->type;
  o.attributes = quant_group_attributes(q, where(o.name));
  data->name = "data";
  o.layout = "zt.quant_group/1";
}

}  // namespace zt::v2
