// Spec 1.x manifests: a map {version, objects: {name: {shape, format,
// components: {role: {dtype, offset, length, ...}}}}, attributes}.
#include <algorithm>

#include "manifest/decode_internal.h"
#include "types/dtype.h"

namespace zt::manifest_decode {

void decode_component_v1(const Tree &t, uint32_t node, Component &c, SpecVersion spec, const Ctx &ctx, Damage &dmg) {
  if (t.node(node).kind != Kind::Map) {
    dmg.set(ZT_E_FIELD, ctx + ": component is a " + std::string(cbor::kind_name(t.node(node).kind)) + ", not a map");
    return;
  }
  bool have_dtype = false, have_offset = false, have_length = false;
  for_each_pair(t, node, [&](uint32_t k, uint32_t v, std::string_view key) {
    const auto &kn = t.node(k);
    const auto &vn = t.node(v);
    auto wrong = [&](const char *want) {
      dmg.set(ZT_E_FIELD,
              ctx + ": field '" + std::string(key) + "' is a " + cbor::kind_name(vn.kind) + ", expected " + want);
    };
    if (kn.kind != Kind::Text) {
      c.extra.push_back({raw_string(t, k), raw_string(t, v)});
    } else if (key == "dtype") {
      if (vn.kind != Kind::Text) {
        wrong("text");
      } else {
        have_dtype = true;
        std::string_view name = t.text(vn);
        c.dtype = dtype_from_short_name(name);
        c.dtype_name = std::string(name);
        if (c.dtype == ZT_DTYPE_UNKNOWN && spec == SpecVersion::V1_1) {
          // 1.1 spelled some logical types as dtypes.
          struct Map11 {
            const char *old, *type;
            zt_dtype dtype;
          };
          static const Map11 kMap[] = {{"f8_e4m3", "f8_e4m3fn", ZT_U8},
                                       {"f8_e5m2", "f8_e5m2", ZT_U8},
                                       {"complex64", "complex64", ZT_F32},
                                       {"complex128", "complex128", ZT_F64}};
          for (const auto &e : kMap) {
            if (name == e.old) {
              c.dtype = e.dtype;
              c.dtype_name = dtype_name(e.dtype);
              if (!c.has_type) {
                c.has_type = true;
                c.logical_type = e.type;
              }
            }
          }
        }
        if (c.dtype == ZT_DTYPE_UNKNOWN)
          dmg.set(ZT_E_DTYPE,
                  ctx + ": unknown dtype '" + printable(c.dtype_name) + "' (not one of the 13 storage types)");
      }
    } else if (key == "type") {
      // null means absent
      if (std::string_view text; optional_text(t, v, text, wrong)) {
        c.has_type = true;
        c.logical_type = std::string(text);
      }
    } else if (key == "offset") {
      take(read_uint, t, v, c.offset, have_offset, "an unsigned integer", wrong);
    } else if (key == "length") {
      take(read_uint, t, v, c.length, have_length, "an unsigned integer", wrong);
    } else if (key == "uncompressed_length") {
      if (is_null(t, v)) {
      } else if (!read_uint(t, v, c.uncompressed_length)) {
        wrong("an unsigned integer");
      } else {
        c.has_uncompressed_length = true;
      }
    } else if (key == "encoding") {
      // null means absent: the default, "raw" (spec 1.2 §1 Component)
      if (std::string_view text; optional_text(t, v, text, wrong)) {
        set_encoding(c, text, dmg, ctx);
      }
    } else if (key == "digest") {
      if (std::string_view text; optional_text(t, v, text, wrong)) {
        c.has_digest = true;
        c.digest = std::string(text);
        parse_digest_into(c, dmg, ctx);
      }
    } else {
      c.extra.push_back({raw_string(t, k), raw_string(t, v)});
    }
  });
  if (!have_dtype) dmg.set(ZT_E_FIELD, ctx + ": required field 'dtype' is missing");
  if (!have_offset) dmg.set(ZT_E_FIELD, ctx + ": required field 'offset' is missing");
  if (!have_length) dmg.set(ZT_E_FIELD, ctx + ": required field 'length' is missing");
}

void decode_object_v1(const Tree &t, uint32_t node, Object &o, Manifest &man, const DecodeLimits &limits) {
  const Ctx ctx{o.name};
  Damage odmg;
  if (!valid_utf8(o.name.data(), o.name.size())) odmg.set(ZT_E_NAME, ctx + ": object name is not valid UTF-8");
  const auto &n = t.node(node);
  if (n.kind != Kind::Map) {
    o.status = ZT_E_FIELD;
    o.error = ctx + ": object is a " + std::string(cbor::kind_name(n.kind)) + ", not a map";
    return;
  }
  bool have_shape = false, have_components = false;
  for_each_pair(t, node, [&](uint32_t k, uint32_t v, std::string_view key) {
    const auto &kn = t.node(k);
    const auto &vn = t.node(v);
    auto wrong = [&](const char *want) {
      odmg.set(ZT_E_FIELD,
               ctx + ": field '" + std::string(key) + "' is a " + cbor::kind_name(vn.kind) + ", expected " + want);
    };
    if (kn.kind != Kind::Text) {
      o.extra.push_back({raw_string(t, k), raw_string(t, v)});
    } else if (key == "shape") {
      take(read_shape, t, v, o.shape, have_shape, "an array of unsigned integers", wrong);
    } else if (key == "format") {
      if (vn.kind != Kind::Text) {
        wrong("text");
      } else {
        o.has_format = true;
        o.format = std::string(t.text(vn));
      }
    } else if (key == "attributes") {
      if (is_null(t, v)) {
      } else if (vn.kind != Kind::Map) {
        wrong("a map");
      } else {
        o.has_attributes = true;
        o.attributes = raw_string(t, v);
      }
    } else if (key == "components") {
      if (vn.kind != Kind::Map) {
        wrong("a map");
      } else {
        have_components = true;
        o.components.reserve(vn.value);
        uint32_t ck = t.first_child(v);
        for (uint64_t q = 0; q < vn.value; ++q) {
          uint32_t cv = t.next(ck);
          Component c;
          Damage cdmg;
          if (t.node(ck).kind != Kind::Text) {
            c.role = "";
            cdmg.set(ZT_E_FIELD,
                     ctx + ": a component role is a " + std::string(cbor::kind_name(t.node(ck).kind)) + ", not text");
          } else {
            c.role = std::string(t.text(ck));
          }
          const Ctx cctx{o.name, &c.role};
          if (!valid_utf8(c.role.data(), c.role.size())) cdmg.set(ZT_E_NAME, cctx + ": role is not valid UTF-8");
          decode_component_v1(t, cv, c, man.spec, cctx, cdmg);
          c.status = cdmg.status;
          c.error = std::move(cdmg.message);
          o.components.push_back(std::move(c));
          ck = t.next(cv);
        }
      }
    } else {
      o.extra.push_back({raw_string(t, k), raw_string(t, v)});
    }
  });
  if (!have_shape) odmg.set(ZT_E_FIELD, ctx + ": required field 'shape' is missing");
  if (!o.has_format) odmg.set(ZT_E_FIELD, ctx + ": required field 'format' is missing");
  if (!have_components) odmg.set(ZT_E_FIELD, ctx + ": required field 'components' is missing");
  o.status = odmg.status;
  o.error = std::move(odmg.message);
  if (o.status == ZT_OK || have_shape) {
    for (auto &c : o.components)
      if (c.status == ZT_OK) validate_component(c, o, man, limits);
  }
}

void decode_v1(const Tree &t, Manifest &man, const DecodeLimits &limits, const std::string &path,
               std::vector<Object> early) {
  const uint32_t root = t.root();
  const auto &r = t.node(root);
  if (r.kind != Kind::Map)
    fail(ZT_E_MANIFEST, "'" + path + "': manifest is a CBOR " + cbor::kind_name(r.kind) + ", not a map");
  uint32_t version = 0, objects = 0;
  for_each_pair(t, root, [&](uint32_t k, uint32_t v, std::string_view key) {
    const auto &kn = t.node(k);
    if (kn.kind == Kind::Text && key == "version") {
      version = v;
    } else if (kn.kind == Kind::Text && key == "objects") {
      objects = v;
    } else if (kn.kind == Kind::Text && key == "attributes") {
      if (!is_null(t, v)) {
        if (t.node(v).kind != Kind::Map)
          fail(ZT_E_MANIFEST,
               "'" + path + "': file attributes are a " + cbor::kind_name(t.node(v).kind) + ", not a map");
        man.has_attributes = true;
        man.attributes = raw_string(t, v);
      }
    } else {
      man.extra.push_back({raw_string(t, k), raw_string(t, v)});
    }
  });
  if (!version) fail(ZT_E_VERSION, "'" + path + "': manifest has no 'version'");
  if (t.node(version).kind != Kind::Text)
    fail(ZT_E_VERSION,
         "'" + path + "': manifest 'version' is a " + cbor::kind_name(t.node(version).kind) + ", not text");
  man.version = std::string(t.text(version));
  int major, minor;
  if (!parse_version(man.version, major, minor))
    fail(ZT_E_VERSION,
         "'" + path + "': manifest version '" + printable(man.version) + "' is not of the form MAJOR.MINOR.PATCH");
  if (major != 1)
    fail(ZT_E_VERSION, "'" + path + "': spec version " + printable(man.version) + " has major " +
                           std::to_string(major) + "; this library reads 1.x and 0.1");
  man.spec = minor >= 2 ? SpecVersion::V1_2 : SpecVersion::V1_1;
  if (!objects) fail(ZT_E_MANIFEST, "'" + path + "': manifest has no 'objects'");
  const auto &on = t.node(objects);
  if (on.kind != Kind::Map)
    fail(ZT_E_MANIFEST, "'" + path + "': manifest 'objects' is a " + cbor::kind_name(on.kind) + ", not a map");
  if (early.size() > on.value) fail(ZT_E_INTERNAL, "'" + path + "': more objects decoded than the manifest holds");
  const size_t done_early = early.size();
  man.objects = std::move(early);
  man.objects.resize(on.value);
  // The objects not decoded during the parse were collapsed
  // (kCollapseObjects): each is parsed again on its own into one reused
  // small tree, which stays in cache.
  Tree one;
  const std::string what = "'" + path + "' manifest";
  uint32_t k = t.first_child(objects);
  for (uint64_t p = 0; p < on.value; ++p) {
    uint32_t v = t.next(k);
    if (t.node(k).kind != Kind::Text)
      fail(ZT_E_MANIFEST, "'" + path + "': an object name is a " + cbor::kind_name(t.node(k).kind) +
                              ", not text (byte " + std::to_string(t.offset_of(k)) + " of the manifest)");
    if (p < done_early) {
      k = t.next(v);
      continue;
    }
    Object &o = man.objects[p];
    o.name = std::string(t.text(k));
    const auto &vn = t.node(v);
    if (vn.collapsed) {
      cbor::ParseOptions opts;
      opts.max_depth = kMaxDepth - kCollapseObjects;
      opts.base_offset = t.offset_of(v);
      opts.already_checked = true;
      opts.check_only_under = "attributes";  // kept as raw bytes: no nodes needed
      opts.check_only_depths = 1u << 1;      // the object's own attributes
      one.parse(t.data() + vn.begin, vn.end - vn.begin, what, opts);
      decode_object_v1(one, one.root(), o, man, limits);
    } else {
      decode_object_v1(t, v, o, man, limits);
    }
    k = t.next(v);
  }
}

}  // namespace zt::manifest_decode
