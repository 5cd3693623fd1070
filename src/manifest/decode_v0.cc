// Legacy spec 0.1 manifests: an array of {name, offset, size, dtype, shape,
// encoding, ...} entries, each one dense object with one 'data' component.
#include "manifest/decode_internal.h"
#include "types/dtype.h"

namespace zt::manifest_decode {

void decode_v0(const Tree &t, Manifest &man, const DecodeLimits &limits, const std::string &path) {
  man.version = "0.1.0";
  man.spec = SpecVersion::V0_1;
  const auto &r = t.node(t.root());
  if (r.kind != Kind::Array)
    fail(ZT_E_MANIFEST, "'" + path + "': legacy 0.1 manifest is a CBOR " + cbor::kind_name(r.kind) + ", not an array");
  man.objects.resize(r.value);
  uint32_t e = t.first_child(t.root());
  for (uint64_t idx = 0; idx < r.value; ++idx, e = t.next(e)) {
    const auto &en = t.node(e);
    if (en.kind != Kind::Map)
      fail(ZT_E_MANIFEST,
           "'" + path + "': legacy entry " + std::to_string(idx) + " is a " + cbor::kind_name(en.kind) + ", not a map");
    uint32_t name = t.find(e, "name");
    if (!name || t.node(name).kind != Kind::Text)
      fail(ZT_E_FIELD, "'" + path + "': legacy entry " + std::to_string(idx) + " has no text 'name'");
    Object &o = man.objects[idx];
    o.name = std::string(t.text(name));
    const Ctx ctx{o.name};
    Damage dmg;
    if (!valid_utf8(o.name.data(), o.name.size())) dmg.set(ZT_E_NAME, ctx + ": name is not valid UTF-8");
    Component c;
    c.role = "data";
    Damage cdmg;
    bool have[5] = {};  // offset, size, dtype, shape, encoding
    std::string layout = "dense";
    std::vector<RawField> custom;
    for_each_pair(t, e, [&](uint32_t k, uint32_t v, std::string_view key) {
      const auto &kn = t.node(k);
      const auto &vn = t.node(v);
      auto wrong = [&](const char *want) {
        cdmg.set(ZT_E_FIELD, ctx + ": legacy field '" + std::string(key) + "' is a " + cbor::kind_name(vn.kind) +
                                 ", expected " + want);
      };
      if (kn.kind != Kind::Text) {
        custom.push_back({raw_string(t, k), raw_string(t, v)});
      } else if (key == "name") {
      } else if (key == "offset") {
        take(read_uint, t, v, c.offset, have[0], "an unsigned integer", wrong);
      } else if (key == "size") {
        take(read_uint, t, v, c.length, have[1], "an unsigned integer", wrong);
      } else if (key == "dtype") {
        if (vn.kind != Kind::Text) {
          wrong("text");
        } else {
          have[2] = true;
          c.dtype = dtype_from_legacy_name(t.text(vn));
          c.dtype_name = c.dtype ? dtype_name(c.dtype) : std::string(t.text(vn));
          if (!c.dtype) cdmg.set(ZT_E_DTYPE, ctx + ": unknown legacy dtype '" + printable(c.dtype_name) + "'");
        }
      } else if (key == "shape") {
        take(read_shape, t, v, o.shape, have[3], "an array of unsigned integers", wrong);
      } else if (key == "encoding") {
        if (vn.kind != Kind::Text) {
          wrong("text");
        } else {
          have[4] = true;
          set_encoding(c, t.text(vn), cdmg, ctx);
        }
      } else if (key == "data_endianness") {
        if (is_null(t, v)) {
          // An optional field (spec 0.1 §4): null means absent, little-endian.
        } else if (vn.kind != Kind::Text || (t.text(vn) != "little" && t.text(vn) != "big"))
          cdmg.set(ZT_E_FIELD, ctx + ": data_endianness must be \"little\" or \"big\"");
        else
          c.big_endian = t.text(vn) == "big";
      } else if (key == "checksum") {
        if (std::string_view text; optional_text(t, v, text, wrong)) {
          c.has_digest = true;
          c.digest = std::string(text);
          // Spec 0.1 §4 leaves the checksum's algorithm and representation
          // to producers and consumers: one that names no algorithm
          // ("algorithm:value") cannot be checked, but it is no damage.
          const size_t colon = c.digest.find(':');
          if (colon == std::string::npos || colon == 0)
            c.parsed_digest.alg = ZT_DIGEST_UNKNOWN;
          else
            parse_digest_into(c, cdmg, ctx);
        }
      } else if (key == "layout") {
        // null means absent: the default, "dense" (spec 0.1 Tensor Metadata)
        if (std::string_view text; optional_text(t, v, text, wrong)) {
          layout = std::string(text);
          if (layout != "dense") custom.push_back({raw_string(t, k), raw_string(t, v)});
        }
      } else {
        // Custom keys (sparse_format and friends included) become attributes.
        custom.push_back({raw_string(t, k), raw_string(t, v)});
      }
    });
    static const char *kRequired[] = {"offset", "size", "dtype", "shape", "encoding"};
    for (int i = 0; i < 5; ++i)
      if (!have[i]) cdmg.set(ZT_E_FIELD, ctx + ": required legacy field '" + kRequired[i] + "' is missing");
    o.has_format = true;
    o.format = layout;
    if (!custom.empty()) {
      o.has_attributes = true;
      o.attributes = encode_raw_map(custom);
    }
    c.status = cdmg.status;
    c.error = std::move(cdmg.message);
    o.status = dmg.status;
    o.error = std::move(dmg.message);
    o.components.push_back(std::move(c));
    if (o.components[0].status == ZT_OK && have[3]) validate_component(o.components[0], o, man, limits);
  }
}

}  // namespace zt::manifest_decode
