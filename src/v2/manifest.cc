#include "v2/manifest.h"

#include <algorithm>
#include <vector>

#include "digest/digest.h"
#include "manifest/decode.h"
#include "types/dtype.h"
#include "util/error.h"
#include "v2/det_cbor.h"
#include "v2/footer.h"
#include "v2/rule.h"
#include "v2/validate.h"
#include "v2/vocab.h"

namespace zt::v2 {
namespace {

using cbor::Cursor;
using cbor::Head;

constexpr size_t kMaxNameBytes = 1024;  // §3.5
constexpr size_t kMaxShardName = 64;    // §7.1
constexpr size_t kMaxRank = 64;         // §3.3

class Walker {
 public:
  Walker(const uint8_t *d, size_t n, const std::string &pre) : cur_(d, n), pre_(pre) {}

  void root(Manifest &m) {
    const Head h = cur_.head(0);
    if (h.major != cbor::kMap)
      reject(Rule::Schema, pre_ + "the manifest root is " + cur_.kind(0) + ", not a map", ZT_E_MANIFEST);
    bool have_objects = false;
    size_t p = h.payload;
    // Each walker returns where its value ends, so every byte is walked
    // once (a skip() of a value it then walks again would walk it twice at
    // every level).
    for (uint64_t i = 0; i < h.arg; ++i) {
      const size_t kp = p, vp = cur_.skip(kp);
      const Head k = cur_.head(kp);
      const std::string_view key = k.major == cbor::kText ? cur_.text(k) : std::string_view();
      size_t end;
      if (k.major == cbor::kText && key == "attributes") {
        end = attributes(vp, "the file's 'attributes'");
        m.has_attributes = true;
        m.attributes = std::string(cur_.span(vp, end));
      } else if (k.major == cbor::kText && key == "shards") {
        end = shards(vp, m);
      } else if (k.major == cbor::kText && key == "objects") {
        have_objects = true;
        end = objects(vp, m);
      } else {
        end = cur_.skip(vp);
        m.extra.push_back({std::string(cur_.span(kp, vp)), std::string(cur_.span(vp, end))});
      }
      p = end;
    }
    if (!have_objects) reject(Rule::Schema, pre_ + "the manifest has no 'objects'", ZT_E_MANIFEST);
  }

 private:
  // Messages are built only when a rule fails: a 100 000-object manifest
  // that passes must not pay for a string per field. The object and part
  // being walked are remembered for them.
  std::string label(const char *field) const {
    if (!obj_) return field;
    return (part_ ? where(*obj_, *part_) : where(*obj_)) + (field[0] ? ": " : "") + field;
  }

  [[noreturn]] void schema(const std::string &m, zt_status s = ZT_OK) { reject(Rule::Schema, pre_ + m, s); }

  void name(std::string_view n, const char *field) {
    if (n.size() - 1 < kMaxNameBytes && n.find('\0') == std::string_view::npos) return;  // the common case
    if (n.empty()) reject(Rule::Name, pre_ + label(field) + " is empty");
    if (n.size() > kMaxNameBytes)
      reject(Rule::Name, pre_ + label(field) + " is " + std::to_string(n.size()) + " bytes long, more than 1024");
    reject(Rule::Name, pre_ + label(field) + " '" + printable(std::string(n)) + "' contains U+0000");
  }

  Head map_at(size_t pos, const char *field) {
    const Head h = cur_.head(pos);
    if (h.major != cbor::kMap) schema(label(field) + " is " + cur_.kind(pos) + ", not a map");
    return h;
  }

  std::string_view text_at(size_t pos, const char *field) {
    const Head h = cur_.head(pos);
    if (h.major != cbor::kText) schema(label(field) + " is " + cur_.kind(pos) + ", not text");
    return cur_.text(h);
  }

  uint64_t uint_at(size_t pos, const char *field) {
    const Head h = cur_.head(pos);
    if (h.major != cbor::kUint) schema(label(field) + " is " + cur_.kind(pos) + ", not an unsigned integer");
    return h.arg;
  }

  // §3.1: a map whose keys are text under the name rules; its values are
  // free within what det_cbor.cc admits (no tags).
  size_t attributes(size_t pos, const char *field) {
    const Head h = map_at(pos, field);
    size_t p = h.payload;
    for (uint64_t i = 0; i < h.arg; ++i) {
      const Head k = cur_.head(p);
      if (k.major != cbor::kText) schema("a key of " + label(field) + " is " + cur_.kind(p) + ", not text");
      name(cur_.text(k), "an attribute key");
      p = cur_.skip(cur_.skip(p));
    }
    return p;
  }

  // "<algorithm>:<lowercase hex>" (§3.4); parsed for the model.
  void digest(std::string_view d, const std::string &what, Component *c) {
    const size_t colon = d.find(':');
    bool ok = colon != std::string_view::npos && colon > 0 && colon + 1 < d.size();
    for (size_t i = 0; ok && i < d.size(); ++i) {
      const char ch = d[i];
      if (i < colon)
        ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
      else if (i > colon)
        ok = (ch >= 'a' && ch <= 'f') || (ch >= '0' && ch <= '9');
    }
    if (!ok)
      schema(what + " '" + printable(std::string(d)) + "' is not of the form algorithm:lowercase-hex",
             ZT_E_DIGEST_FORMAT);
    if (!c) return;
    c->has_digest = true;
    c->digest = std::string(d);
    try {
      c->parsed_digest = parse_digest(d);
    } catch (const Error &e) {
      schema(what + ": " + e.what(), ZT_E_DIGEST_FORMAT);
    }
    if (c->parsed_digest.alg == ZT_DIGEST_CRC32C) c->parsed_digest.alg = ZT_DIGEST_UNKNOWN;  // not a v2 algorithm
  }

  static bool shard_name_ok(std::string_view n) {
    if (n.empty() || n.size() > kMaxShardName || n[0] == '.') return false;
    for (char ch : n)
      if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
            ch == '_' || ch == '-'))
        return false;
    return true;
  }
  void shard_name(std::string_view n, const std::string &what) {
    if (!shard_name_ok(n))
      reject(Rule::ShardName, pre_ + what + " '" + printable(std::string(n)) +
                                  "' is not 1-64 bytes of A-Z a-z 0-9 . _ - not starting with '.'");
  }

  size_t shards(size_t pos, Manifest &m) {
    const Head h = map_at(pos, "'shards'");
    size_t p = h.payload;
    for (uint64_t i = 0; i < h.arg; ++i) {
      const Head k = cur_.head(p);
      if (k.major != cbor::kText) schema("a key of 'shards' is " + std::string(cur_.kind(p)) + ", not text");
      Manifest::ShardEntry e;
      e.name = std::string(cur_.text(k));
      shard_name(e.name, "shard name");
      const size_t vp = cur_.skip(p);
      const std::string what = "shard '" + e.name + "'";
      const Head v = cur_.head(vp);
      if (v.major != cbor::kMap) schema(what + " is " + cur_.kind(vp) + ", not a map");
      bool have_size = false, have_digest = false;
      size_t q = v.payload;
      for (uint64_t j = 0; j < v.arg; ++j) {
        const size_t fk = q, fv = cur_.skip(fk);
        const Head kh = cur_.head(fk);
        const std::string_view key = kh.major == cbor::kText ? cur_.text(kh) : std::string_view();
        const Head vh = cur_.head(fv);
        if (key == "size") {
          if (vh.major != cbor::kUint) schema(what + ": 'size' is " + cur_.kind(fv) + ", not an unsigned integer");
          e.size = vh.arg;
          have_size = true;
        } else if (key == "digest") {
          if (vh.major != cbor::kText) schema(what + ": 'digest' is " + cur_.kind(fv) + ", not text");
          e.digest = std::string(cur_.text(vh));
          digest(e.digest, what + ": 'digest'", nullptr);
          have_digest = true;
        }
        q = cur_.skip(fv);
      }
      if (!have_size) schema(what + " has no 'size'");
      if (!have_digest) schema(what + " has no 'digest'");
      if (e.size < kMinFileSize) schema(what + ": size " + std::to_string(e.size) + " is below a file's 48 bytes");
      m.shards.push_back(std::move(e));
      p = cur_.skip(vp);
    }
    // Keys are in encoded order (shorter first); lookups want name order.
    std::sort(m.shards.begin(), m.shards.end(),
              [](const Manifest::ShardEntry &a, const Manifest::ShardEntry &b) { return a.name < b.name; });
    return p;
  }

  // The entries of a map of names (the objects, or an object's parts):
  // each key a text name that obeys §3.5, kept in a new element of `into`
  // (its member `name_of`), which `current` names in messages while
  // `entry` parses the value. Returns where the map ends.
  template <typename T, typename Entry>
  size_t named_entries(const Head &h, std::vector<T> &into, std::string T::*name_of, const char *what,
                       const std::string *&current, Entry entry) {
    into.reserve(static_cast<size_t>(h.arg));
    size_t p = h.payload;
    for (uint64_t i = 0; i < h.arg; ++i) {
      const Head k = cur_.head(p);
      if (k.major != cbor::kText) schema(label(what) + " is " + cur_.kind(p) + ", not text");
      into.emplace_back();
      T &e = into.back();
      e.*name_of = std::string(cur_.text(k));
      name(e.*name_of, what);
      current = &(e.*name_of);
      p = entry(cur_.skip(p), e);
      current = nullptr;
    }
    return p;
  }

  size_t objects(size_t pos, Manifest &m) {
    const Head h = map_at(pos, "'objects'");
    return named_entries(h, m.objects, &Object::name, "an object name", obj_,
                         [this](size_t q, Object &o) { return object(q, o); });
  }

  size_t object(size_t pos, Object &o) {
    const Head h = map_at(pos, "");
    bool have_shape = false, have_parts = false;
    size_t p = h.payload;
    for (uint64_t i = 0; i < h.arg; ++i) {
      const size_t kp = p, vp = cur_.skip(kp);
      const Head k = cur_.head(kp);
      const std::string_view key = k.major == cbor::kText ? cur_.text(k) : std::string_view();
      size_t end = 0;
      if (k.major == cbor::kText && key == "shape") {
        const Head a = cur_.head(vp);
        if (a.major != cbor::kArray) schema(label("'shape'") + " is " + cur_.kind(vp) + ", not an array");
        if (a.arg > kMaxRank)
          reject(Rule::Shape, pre_ + label("rank ") + std::to_string(a.arg) + " is above the limit of 64");
        size_t q = a.payload;
        for (uint64_t d = 0; d < a.arg; ++d) {
          o.shape.push_back(uint_at(q, "a 'shape' entry"));
          q = cur_.skip(q);
        }
        end = q;
        have_shape = true;
      } else if (k.major == cbor::kText && key == "layout") {
        o.format = std::string(text_at(vp, "'layout'"));
        o.has_format = true;
        end = cur_.skip(vp);  // a text: its head says where it ends
      } else if (k.major == cbor::kText && key == "attributes") {
        end = attributes(vp, "'attributes'");
        o.has_attributes = true;
        o.attributes = std::string(cur_.span(vp, end));
      } else if (k.major == cbor::kText && key == "parts") {
        end = parts(vp, o);
        have_parts = true;
      } else {
        end = cur_.skip(vp);
        o.extra.push_back({std::string(cur_.span(kp, vp)), std::string(cur_.span(vp, end))});
      }
      p = end;
    }
    if (!have_shape) schema(label("") + " has no 'shape'");
    if (!o.has_format) schema(label("") + " has no 'layout'");
    if (!have_parts) schema(label("") + " has no 'parts'");
    auto numel = shape_numel(o.shape);
    if (!numel) reject(Rule::Shape, pre_ + label("the product of the shape overflows 64 bits"));
    o.numel = *numel;
    // Keys come shortest first: "parts" before "shape" and "layout", so
    // the types are mapped once the object is whole.
    for (Component &c : o.components) {
      part_ = &c.role;
      map_types(o, c);
    }
    part_ = nullptr;
    return p;
  }

  size_t parts(size_t pos, Object &o) {
    const Head h = map_at(pos, "'parts'");
    if (h.arg == 0) schema(label("'parts' is empty (an object has at least one)"));
    return named_entries(h, o.components, &Component::role, "a part name", part_,
                         [this](size_t q, Component &c) { return part(q, c); });
  }

  size_t part(size_t pos, Component &c) {
    const Head h = map_at(pos, "");
    bool have_dtype = false, have_blob = false;
    bool have_encoding = false;
    size_t p = h.payload;
    for (uint64_t i = 0; i < h.arg; ++i) {
      const size_t kp = p, vp = cur_.skip(kp), end = cur_.skip(vp);
      const Head k = cur_.head(kp);
      const std::string_view key = k.major == cbor::kText ? cur_.text(k) : std::string_view();
      if (k.major != cbor::kText) {
        c.extra.push_back({std::string(cur_.span(kp, vp)), std::string(cur_.span(vp, end))});
      } else if (key == "dtype") {
        c.dtype_name = std::string(text_at(vp, "'dtype'"));
        c.dtype = storage_dtype(c.dtype_name);
        if (c.dtype == ZT_DTYPE_UNKNOWN)
          schema(label("dtype '") + printable(c.dtype_name) + "' is not one of the 12 storage types", ZT_E_DTYPE);
        have_dtype = true;
      } else if (key == "type") {
        c.logical_type = std::string(text_at(vp, "'type'"));
        c.has_type = true;
      } else if (key == "blob") {
        const Head a = cur_.head(vp);
        if (a.major != cbor::kArray) schema(label("'blob'") + " is " + cur_.kind(vp) + ", not an array");
        if (a.arg != 2)
          schema(label("'blob'") + " has " + std::to_string(a.arg) + " elements, not exactly [offset, length]");
        c.offset = uint_at(a.payload, "the blob offset");
        c.length = uint_at(cur_.skip(a.payload), "the blob length");
        have_blob = true;
      } else if (key == "shard") {
        c.shard = std::string(text_at(vp, "'shard'"));
        if (!shard_name_ok(c.shard)) shard_name(c.shard, label("shard"));
      } else if (key == "encoding") {
        c.encoding_name = std::string(text_at(vp, "'encoding'"));
        have_encoding = true;
      } else if (key == "decoded_length") {
        c.uncompressed_length = uint_at(vp, "'decoded_length'");
        c.has_uncompressed_length = true;
      } else if (key == "digest") {
        const std::string_view d = text_at(vp, "'digest'");
        digest(d, label("'digest'"), &c);
      } else {
        c.extra.push_back({std::string(cur_.span(kp, vp)), std::string(cur_.span(vp, end))});
      }
      p = end;
    }
    if (!have_dtype) schema(label("") + " has no 'dtype'");
    if (!have_blob) schema(label("") + " has no 'blob'");
    if (have_encoding != c.has_uncompressed_length)
      schema(label("'decoded_length' must be present exactly when 'encoding' is"));
    return p;
  }

  // Dtype, logical type and encoding onto the model; what this library
  // cannot decode stays readable structurally (ZT_E_UNSUPPORTED for typed
  // reads, naming the id).
  void map_types(const Object &o, Component &c) {
    const bool encoded = c.has_uncompressed_length;
    c.digest_of_decoded = true;
    if (c.has_type) {
      const LogicalTypeDef *t = find_logical_type(c.logical_type);
      if (t) {
        if (t->storage != c.dtype)
          schema(label("logical type '") + c.logical_type + "' requires dtype " + dtype_name(t->storage) + ", not " +
                     c.dtype_name,
                 ZT_E_DTYPE);
        c.dtype = t->model_dtype;
        c.ratio = t->ratio;
        c.content_check = t->check;
        // The padding nibble is known only where the element count is: a
        // dense object's, when it is odd.
        if (t->check == kF4Padding && !(o.format == "dense" && o.numel % 2 == 1)) c.content_check = kNoCheck;
      } else {
        unsupported(c, label("logical type '") + printable(c.logical_type) +
                           "' is not one this library knows; its bytes are readable only structurally "
                           "(zt_component_read_stored)");
      }
    }
    if (encoded) {
      c.decoded_length = c.uncompressed_length;
      c.encoding = ZT_ENCODING_UNKNOWN;
      // A registered encoding (find_encoding) gets its decoder in the
      // reader; any other leaves the part structural.
      if (const EncodingDef *e = find_encoding(c.encoding_name)) {
        c.encoding = e->model_encoding;
        c.seekable = e->seekable;
      } else
        unsupported(c, label("encoding '") + printable(c.encoding_name) +
                           "' is not one this library decodes; its stored bytes are readable only structurally "
                           "(zt_component_read_stored)");
    } else {
      c.encoding = ZT_ENCODING_RAW;
      c.encoding_name = "raw";
      c.decoded_length = c.length;
    }
    // A part in a shard: the reader opens the shard (set/v2_shards.h) and
    // records on the part why, if it cannot.
  }

  static void unsupported(Component &c, const std::string &m) {
    if (c.status != ZT_OK) return;
    c.status = ZT_E_UNSUPPORTED;
    c.error = m;
  }

  Cursor cur_;
  const std::string &pre_;
  const std::string *obj_ = nullptr;
  const std::string *part_ = nullptr;
};

}  // namespace

Manifest decode_manifest_bytes(const uint8_t *data, size_t size, uint64_t hash, uint64_t manifest_offset,
                               uint64_t file_size, const std::string &path) {
  const std::string pre = "'" + path + "': ";
  Manifest m;
  m.version = "2";
  m.spec = SpecVersion::V2;
  m.data_end = file_size - kFooterSize;
  const uint64_t got = xxh3_64(data, size);
  if (got != hash) {
    char b[80];
    std::snprintf(b, sizeof b, "XXH3-64 of the manifest is %016llx, the footer says %016llx",
                  static_cast<unsigned long long>(got), static_cast<unsigned long long>(hash));
    reject(Rule::ManifestHash, pre + b);
  }
  cbor::check_deterministic(data, size, pre);
  Walker(data, size, pre).root(m);
  validate_manifest(m, manifest_offset, size, pre);
  if (m.objects.size() > UINT32_MAX) fail(ZT_E_LIMIT, pre + "more than 2^32 objects");
  m.name_order.resize(m.objects.size());
  for (uint32_t i = 0; i < m.name_order.size(); ++i) m.name_order[i] = i;
  // Encoded order puts shorter names first; lookups want bytewise order.
  auto by_name = [&](uint32_t a, uint32_t b) { return m.objects[a].name < m.objects[b].name; };
  if (!std::is_sorted(m.name_order.begin(), m.name_order.end(), by_name))
    std::sort(m.name_order.begin(), m.name_order.end(), by_name);
  for (Object &o : m.objects) settle_object_status(o);
  return m;
}

Manifest read_manifest(const Source &src, const ManifestLocation &loc) {
  if (loc.data_shard) {
    Manifest m;
    m.version = "2";
    m.spec = SpecVersion::V2;
    m.data_shard = true;
    m.data_end = src.size() - kFooterSize;
    return m;
  }
  std::vector<uint8_t> copy;
  const uint8_t *bytes = src.read_meta(loc.offset, static_cast<size_t>(loc.size), copy);
  return decode_manifest_bytes(bytes, static_cast<size_t>(loc.size), loc.hash, loc.offset, src.size(), src.path());
}

}  // namespace zt::v2
