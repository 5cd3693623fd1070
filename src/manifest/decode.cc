#include "manifest/decode.h"

#include <cbor.h>

#include <algorithm>
#include <cstring>

#include "manifest/cbor_tree.h"
#include "types/dtype.h"
#include "util/cbor_out.h"
#include "util/error.h"

namespace zt {
namespace {

using cbor::Kind;
using cbor::Tree;

constexpr size_t kMaxDepth = 256;
// In a 1.x manifest the root map is depth 0, 'objects' 1, each object 2.
constexpr size_t kCollapseObjects = 2;

// Records damage on an object or component without stopping the decode.
struct Damage {
  zt_status status = ZT_OK;
  std::string message;
  void set(zt_status s, std::string m) {
    if (status == ZT_OK) {
      status = s;
      message = std::move(m);
    }
  }
};

// The "object 'x', component 'y'" prefix of damage messages, built only when
// a message is: an intact object of a 100 000-object manifest never pays for
// it (it was a third of the decode time).
struct Ctx {
  const std::string &object;
  const std::string *role = nullptr;
  std::string str() const { return role ? where(object, *role) : where(object); }
};
std::string operator+(const Ctx &c, const char *s) {
  return c.str() + s;
}

std::string raw_string(const Tree &t, uint32_t i) {
  return std::string(t.raw(i));
}

bool is_null(const Tree &t, uint32_t i) {
  return t.node(i).kind == Kind::Null || t.node(i).kind == Kind::Undefined;
}

// Parses "1.2.0" → major, minor.
bool parse_version(std::string_view v, int &major, int &minor) {
  major = minor = 0;
  size_t i = 0;
  auto number = [&](int &out) {
    size_t start = i;
    long long x = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && i - start < 9) x = x * 10 + (v[i++] - '0');
    out = static_cast<int>(x);
    return i > start;
  };
  if (!number(major)) return false;
  if (i < v.size() && v[i] == '.') {
    ++i;
    if (!number(minor)) return false;
  }
  return true;
}

bool read_uint(const Tree &t, uint32_t i, uint64_t &out) {
  if (t.node(i).kind != Kind::Uint) return false;
  out = t.node(i).value;
  return true;
}

bool read_shape(const Tree &t, uint32_t i, Shape &out) {
  const auto &n = t.node(i);
  if (n.kind != Kind::Array) return false;
  out.clear();
  out.reserve(n.value);
  for (uint32_t c = t.first_child(i); c < n.next; c = t.next(c)) {
    if (t.node(c).kind != Kind::Uint) return false;
    out.push_back(t.node(c).value);
  }
  return true;
}

void parse_digest_into(Component &c, Damage &dmg, const Ctx &ctx) {
  try {
    c.parsed_digest = parse_digest(c.digest);
  } catch (const Error &e) {
    dmg.set(e.status(), ctx + ": " + e.what());
  }
}

// ---- spec 1.x ------------------------------------------------------------

void decode_component_v1(const Tree &t, uint32_t node, Component &c, SpecVersion spec, const Ctx &ctx, Damage &dmg) {
  if (t.node(node).kind != Kind::Map) {
    dmg.set(ZT_E_FIELD, ctx + ": component is a " + std::string(cbor::kind_name(t.node(node).kind)) + ", not a map");
    return;
  }
  bool have_dtype = false, have_offset = false, have_length = false;
  const auto &m = t.node(node);
  uint32_t k = t.first_child(node);
  for (uint64_t p = 0; p < m.value; ++p) {
    uint32_t v = t.next(k);
    const auto &kn = t.node(k);
    std::string_view key = kn.kind == Kind::Text ? t.text(kn) : std::string_view();
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
      if (is_null(t, v)) {
        // null means absent
      } else if (vn.kind != Kind::Text) {
        wrong("text");
      } else {
        c.has_type = true;
        c.logical_type = std::string(t.text(vn));
      }
    } else if (key == "offset") {
      if (!read_uint(t, v, c.offset))
        wrong("an unsigned integer");
      else
        have_offset = true;
    } else if (key == "length") {
      if (!read_uint(t, v, c.length))
        wrong("an unsigned integer");
      else
        have_length = true;
    } else if (key == "uncompressed_length") {
      if (is_null(t, v)) {
      } else if (!read_uint(t, v, c.uncompressed_length)) {
        wrong("an unsigned integer");
      } else {
        c.has_uncompressed_length = true;
      }
    } else if (key == "encoding") {
      if (is_null(t, v)) {
        // null means absent: the default, "raw" (spec 1.2 §1 Component)
      } else if (vn.kind != Kind::Text) {
        wrong("text");
      } else {
        c.encoding_name = std::string(t.text(vn));
        if (c.encoding_name == "raw")
          c.encoding = ZT_ENCODING_RAW;
        else if (c.encoding_name == "zstd")
          c.encoding = ZT_ENCODING_ZSTD;
        else {
          c.encoding = ZT_ENCODING_UNKNOWN;
          dmg.set(ZT_E_ENCODING, ctx + ": unknown encoding '" + printable(c.encoding_name) + "'");
        }
      }
    } else if (key == "digest") {
      if (is_null(t, v)) {
      } else if (vn.kind != Kind::Text) {
        wrong("text");
      } else {
        c.has_digest = true;
        c.digest = std::string(t.text(vn));
        parse_digest_into(c, dmg, ctx);
      }
    } else {
      c.extra.push_back({raw_string(t, k), raw_string(t, v)});
    }
    k = t.next(v);
  }
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
  uint32_t k = t.first_child(node);
  for (uint64_t p = 0; p < n.value; ++p) {
    uint32_t v = t.next(k);
    const auto &kn = t.node(k);
    const auto &vn = t.node(v);
    std::string_view key = kn.kind == Kind::Text ? t.text(kn) : std::string_view();
    auto wrong = [&](const char *want) {
      odmg.set(ZT_E_FIELD,
               ctx + ": field '" + std::string(key) + "' is a " + cbor::kind_name(vn.kind) + ", expected " + want);
    };
    if (kn.kind != Kind::Text) {
      o.extra.push_back({raw_string(t, k), raw_string(t, v)});
    } else if (key == "shape") {
      if (!read_shape(t, v, o.shape))
        wrong("an array of unsigned integers");
      else
        have_shape = true;
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
    k = t.next(v);
  }
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

// Decodes the objects of a 1.x manifest while the tree is being parsed: each
// object, collapsed at depth 2, is decoded as soon as it completes, from
// the nodes the parser built anyway, so its bytes are parsed once. Only
// possible when 'version' came before 'objects' (the spec version steers
// decoding) and every name so far is text; otherwise decode_v1 takes over
// from the first object not decoded here, parsing those again. Object
// damage is recorded, never thrown, so decoding early changes no outcome:
// manifest-level faults are still found by decode_v1, in order.
class EarlyObjects {
 public:
  EarlyObjects(Manifest &man, const DecodeLimits &limits, size_t manifest_bytes)
      : man_(man), limits_(limits), manifest_bytes_(manifest_bytes) {}

  void offer(const Tree &t, uint32_t node, const cbor::detail::OpenItem *anc, size_t depth) {
    if (stopped_ || depth != 2) return;
    const auto &root = anc[0], &parent = anc[1];
    // The item must be a value of the map that is the value of the root's
    // 'objects' key.
    if (parent.node != objects_) {
      if (objects_ != 0 || !is_objects_map(t, root, parent.node)) return stop();
      objects_ = parent.node;
      if (!learn_version(t, root)) return stop();
      // The claimed count is only checked against the bytes left: a valid
      // object takes ~30 bytes, so reserve no more than those could hold (a
      // lying count must not reserve gigabytes before the parse fails).
      objects.reserve(std::min<uint64_t>(t.node(parent.node).value, manifest_bytes_ / kMinObjectBytes));
    }
    if (parent.done % 2 != 1 || parent.done / 2 != objects.size()) return stop();
    const uint32_t key = node - 1;  // a depth-2 key is one node: a leaf or collapsed
    if (t.node(key).kind != Kind::Text) return stop();
    Object &o = objects.emplace_back();
    o.name = std::string(t.text(key));
    decode_object_v1(t, node, o, man_, limits_);
    if (limits_.on_early_object) limits_.on_early_object(o);
  }

  std::vector<Object> objects;  // the first objects.size() objects, decoded

 private:
  void stop() { stopped_ = true; }

  // Whether `map` is the value of a text key "objects" in the root map.
  static bool is_objects_map(const Tree &t, const cbor::detail::OpenItem &root, uint32_t map) {
    if (t.node(root.node).kind != Kind::Map || root.done % 2 != 1) return false;
    uint32_t k = t.first_child(root.node);
    for (uint64_t i = 0; i + 1 < root.done; ++i) k = t.next(k);  // the key just before `map`
    return t.next(k) == map && t.node(k).kind == Kind::Text && t.text(k) == "objects";
  }

  // The spec version from a 'version' key that came before 'objects'.
  bool learn_version(const Tree &t, const cbor::detail::OpenItem &root) {
    // Only the pairs before 'objects' are complete: find() would walk on.
    uint32_t version = 0;
    uint32_t k = t.first_child(root.node);
    for (uint64_t i = 0; i + 1 < root.done && !version; i += 2) {
      const uint32_t v = t.next(k);
      if (t.node(k).kind == Kind::Text && t.text(k) == "version") version = v;
      k = t.next(v);
    }
    if (!version || t.node(version).kind != Kind::Text) return false;
    int major, minor;
    if (!parse_version(t.text(version), major, minor) || major != 1) return false;
    man_.spec = minor >= 2 ? SpecVersion::V1_2 : SpecVersion::V1_1;
    return true;
  }

  // A name byte, then shape/format/components keys and values.
  static constexpr uint64_t kMinObjectBytes = 29;
  Manifest &man_;
  const DecodeLimits &limits_;
  size_t manifest_bytes_;
  uint32_t objects_ = 0;
  bool stopped_ = false;
};

void decode_v1(const Tree &t, Manifest &man, const DecodeLimits &limits, const std::string &path,
               std::vector<Object> early) {
  const uint32_t root = t.root();
  const auto &r = t.node(root);
  if (r.kind != Kind::Map)
    fail(ZT_E_MANIFEST, "'" + path + "': manifest is a CBOR " + cbor::kind_name(r.kind) + ", not a map");
  uint32_t version = 0, objects = 0;
  uint32_t k = t.first_child(root);
  for (uint64_t p = 0; p < r.value; ++p) {
    uint32_t v = t.next(k);
    const auto &kn = t.node(k);
    std::string_view key = kn.kind == Kind::Text ? t.text(kn) : std::string_view();
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
    k = t.next(v);
  }
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
  k = t.first_child(objects);
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

// ---- legacy 0.1 ------------------------------------------------------------

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
    uint32_t k = t.first_child(e);
    for (uint64_t p = 0; p < en.value; ++p) {
      uint32_t v = t.next(k);
      const auto &kn = t.node(k);
      const auto &vn = t.node(v);
      std::string_view key = kn.kind == Kind::Text ? t.text(kn) : std::string_view();
      auto wrong = [&](const char *want) {
        cdmg.set(ZT_E_FIELD, ctx + ": legacy field '" + std::string(key) + "' is a " + cbor::kind_name(vn.kind) +
                                 ", expected " + want);
      };
      if (kn.kind != Kind::Text) {
        custom.push_back({raw_string(t, k), raw_string(t, v)});
      } else if (key == "name") {
      } else if (key == "offset") {
        if (read_uint(t, v, c.offset))
          have[0] = true;
        else
          wrong("an unsigned integer");
      } else if (key == "size") {
        if (read_uint(t, v, c.length))
          have[1] = true;
        else
          wrong("an unsigned integer");
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
        if (read_shape(t, v, o.shape))
          have[3] = true;
        else
          wrong("an array of unsigned integers");
      } else if (key == "encoding") {
        if (vn.kind != Kind::Text) {
          wrong("text");
        } else {
          have[4] = true;
          c.encoding_name = std::string(t.text(vn));
          c.encoding = c.encoding_name == "raw"    ? ZT_ENCODING_RAW
                       : c.encoding_name == "zstd" ? ZT_ENCODING_ZSTD
                                                   : ZT_ENCODING_UNKNOWN;
          if (!c.encoding) cdmg.set(ZT_E_ENCODING, ctx + ": unknown encoding '" + printable(c.encoding_name) + "'");
        }
      } else if (key == "data_endianness") {
        if (is_null(t, v)) {
          // An optional field (spec 0.1 §4): null means absent, little-endian.
        } else if (vn.kind != Kind::Text || (t.text(vn) != "little" && t.text(vn) != "big"))
          cdmg.set(ZT_E_FIELD, ctx + ": data_endianness must be \"little\" or \"big\"");
        else
          c.big_endian = t.text(vn) == "big";
      } else if (key == "checksum") {
        if (is_null(t, v)) {
        } else if (vn.kind != Kind::Text) {
          wrong("text");
        } else {
          c.has_digest = true;
          c.digest = std::string(t.text(vn));
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
        if (is_null(t, v)) {
          // null means absent: the default, "dense" (spec 0.1 Tensor Metadata)
        } else if (vn.kind != Kind::Text) {
          wrong("text");
        } else {
          layout = std::string(t.text(vn));
          if (layout != "dense") custom.push_back({raw_string(t, k), raw_string(t, v)});
        }
      } else {
        // Custom keys (sparse_format and friends included) become attributes.
        custom.push_back({raw_string(t, k), raw_string(t, v)});
      }
      k = t.next(v);
    }
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

}  // namespace

std::string encode_raw_map(const std::vector<RawField> &fields) {
  std::string out;
  cbor::put_map(out, fields.size());
  for (const auto &f : fields) {
    out += f.key;
    out += f.value;
  }
  return out;
}

void settle_object_status(Object &obj) {
  if (obj.status != ZT_OK) return;
  for (const auto &c : obj.components) {
    if (c.status != ZT_OK) {
      obj.status = c.status;
      obj.error = c.error;
      return;
    }
  }
}

const Object *Manifest::find(std::string_view name) const {
  auto it = std::lower_bound(name_order.begin(), name_order.end(), name,
                             [&](uint32_t i, std::string_view n) { return std::string_view(objects[i].name) < n; });
  if (it == name_order.end() || objects[*it].name != name) return nullptr;
  return &objects[*it];
}

namespace {

// RFC 8949 §3.4.6: tag 55799 ("self-described CBOR") may prefix the manifest
// and adds no meaning (docs/reading-rules.md accepts it). Returns the bytes it takes up:
// it may repeat, and its head may use any integer width.
size_t self_describe_prefix(const uint8_t *data, size_t size) {
  size_t pos = 0;
  while (pos < size && (data[pos] >> 5) == 6) {
    const unsigned ai = data[pos] & 31;
    if (ai > 27) break;
    const size_t n = ai < 24 ? 0 : size_t{1} << (ai - 24);
    if (size - pos - 1 < n) break;
    uint64_t tag = ai < 24 ? ai : 0;
    for (size_t i = 0; i < n; ++i) tag = tag << 8 | data[pos + 1 + i];
    if (tag != 55799) break;
    pos += 1 + n;
  }
  return pos;
}

}  // namespace

Manifest decode_manifest(const uint8_t *data, size_t size, Container container, uint64_t data_end,
                         const DecodeLimits &limits, const std::string &path) {
  Manifest man;
  man.data_end = data_end;
  cbor::ParseOptions opts;
  opts.max_depth = kMaxDepth;
  // The item under a self-describe tag is the manifest: parsed on its own, so
  // the root map stays at depth 0 (objects collapse at kCollapseObjects).
  const size_t prefix = self_describe_prefix(data, size);
  data += prefix;
  size -= prefix;
  opts.base_offset = prefix;
  // File and object attributes are kept as their raw bytes: checked, but
  // their insides take no nodes (a big metadata array would cost 24 bytes
  // per element).
  EarlyObjects early(man, limits, size);
  if (container != Container::V0) {
    // The file's attributes (a value of the root) and each object's (a value
    // of an object map, two levels further down).
    opts.check_only_under = "attributes";
    opts.check_only_depths = (1u << 1) | (1u << 3);
    opts.collapse_depth = kCollapseObjects;
    opts.on_collapsed = [&early](const Tree &t, uint32_t node, const cbor::detail::OpenItem *anc, size_t depth) {
      early.offer(t, node, anc, depth);
    };
  }
  Tree tree(data, size, "'" + path + "' manifest", opts);
  if (container == Container::V0)
    decode_v0(tree, man, limits, path);
  else
    decode_v1(tree, man, limits, path, std::move(early.objects));
  validate_overlaps(man);
  if (man.objects.size() > UINT32_MAX) fail(ZT_E_LIMIT, "'" + path + "': more than 2^32 objects");
  man.name_order.resize(man.objects.size());
  for (uint32_t i = 0; i < man.name_order.size(); ++i) man.name_order[i] = i;
  auto by_name = [&](uint32_t a, uint32_t b) { return man.objects[a].name < man.objects[b].name; };
  if (!std::is_sorted(man.name_order.begin(), man.name_order.end(), by_name))
    std::sort(man.name_order.begin(), man.name_order.end(), by_name);
  for (size_t k = 1; k < man.name_order.size(); ++k) {
    const std::string &name = man.objects[man.name_order[k]].name;
    if (name == man.objects[man.name_order[k - 1]].name)
      fail(ZT_E_DUPLICATE_KEY, "'" + path + "': two objects are named '" + printable(name) + "'");
  }
  for (size_t i = 0; i < man.objects.size(); ++i) {
    Object &o = man.objects[i];
    // A damaged component (a role that is not text, say) is the first fault;
    // settle it before judging which components a dense object lacks.
    settle_object_status(o);
    if (o.status == ZT_OK && o.format == "dense") {
      bool has_data = false;
      for (const auto &c : o.components) has_data |= c.role == "data";
      if (!has_data) {
        o.status = ZT_E_COMPONENT_MISSING;
        o.error = where(o.name) + ": dense object has no 'data' component";
      }
    }
    settle_object_status(o);
    if (limits.strict && o.status != ZT_OK) fail(o.status, "'" + path + "': " + o.error);
  }
  return man;
}

}  // namespace zt
