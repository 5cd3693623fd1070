// Editing through the C ABI: copying objects and file-level fields from open
// files into a writer, so that append, remove and merge can be built as
// "write a new file, rename it into place" without losing anything the
// source stored (logical types, encodings, unknown fields, attributes).
#include <algorithm>
#include <cstring>
#include <map>

#include "component_stream.h"
#include "handles.h"
#include "manifest/cbor_tree.h"
#include "migrate.h"

using namespace zt;
using namespace zt::capi;

namespace {

// Raw components are streamed in pieces of this size when they cannot be
// handed over as one view, so memory stays bounded for huge tensors.
constexpr uint64_t kCopyPiece = uint64_t{16} << 20;

BlobOptions blob_options_like(const Component &c) {
  BlobOptions bo;
  bo.encoding = c.encoding;  // zstd is re-encoded at the writer's level
  // Keep the algorithm, recomputed over the new stored bytes; an unknown one
  // cannot be recomputed and would no longer describe the bytes, so it goes.
  zt_digest_alg a = c.has_digest ? c.parsed_digest.alg : ZT_DIGEST_NONE;
  bo.digest = digest_for_1x(a);
  // v2's bool is a logical type over u8; a 1.x file has the dtype itself.
  bo.has_type = c.has_type && !(c.dtype == ZT_BOOL && c.logical_type == "bool");
  bo.logical_type = c.logical_type;
  bo.extra = c.extra;
  return bo;
}

void copy_component(const Reader &in, const Object &o, const Component &c, Writer &w, const std::string &name) {
  // Verify first, so damage in the source is not laundered into a freshly
  // digested file.
  in.verify_component(o, c, false);
  BlobOptions bo = blob_options_like(c);
  w.adapt_copy_options(bo);
  if (copy_sparse_index_as_u64(in, o, c, w, name, bo)) return;  // a spec 1.1 sparse index: written as u64
  if (c.encoding != ZT_ENCODING_RAW) {
    if (c.decoded_known && c.decoded_length <= kCopyPiece) {
      std::vector<uint8_t> bytes = in.read_vector(o, c);
      w.write_blob(name, c.role, c.dtype, bytes.data(), bytes.size(), bo);
      return;
    }
    // Large, or of unknown size (spec 1.1): decoded piece by piece, so a
    // small frame that decodes to gigabytes never sits in memory whole.
    ComponentStream s(in, nullptr, o, c);
    std::vector<uint8_t> piece(static_cast<size_t>(kCopyPiece));
    w.blob_begin(name, c.role, c.dtype, bo);
    while (size_t n = s.read(piece.data(), piece.size())) w.blob_append(piece.data(), n);
    w.blob_end();
    return;
  }
  if (in.source_of(c).data() && !needs_swap(c)) {
    size_t len = 0;
    const uint8_t *view = in.view(o, c, &len);
    w.write_blob(name, c.role, c.dtype, view, len, bo);
    return;
  }
  const size_t esize = zt_dtype_size(c.dtype);
  if (esize == 0) fail(ZT_E_DTYPE, where(o.name, c.role) + ": cannot copy a component of unknown dtype");
  const uint64_t total = c.decoded_length / esize;
  const uint64_t per_piece = std::max<uint64_t>(1, kCopyPiece / esize);
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(total, per_piece) * esize));
  w.blob_begin(name, c.role, c.dtype, bo);
  for (uint64_t first = 0; first < total; first += per_piece) {
    const uint64_t count = std::min(per_piece, total - first);
    in.read_range(o, c, first, count, buf.data(), buf.size());
    w.blob_append(buf.data(), static_cast<size_t>(count * esize));
  }
  w.blob_end();
}

// The pairs of a CBOR map, keyed by a canonical form of the key: two keys
// get the same form exactly when the reader's duplicate check calls them
// equal (a text or byte string definite or indefinite, an integer in any
// width), so a merge never writes a map the reader refuses.
struct MapPairs {
  std::vector<std::string> order;
  std::map<std::string, RawField> pairs;
};

std::string canonical_key(const cbor::Tree &t, uint32_t k) {
  const cbor::Node &n = t.node(k);
  switch (n.kind) {
    case cbor::Kind::Text:
      return "t" + std::string(t.text(n));
    case cbor::Kind::Bytes:
      return "b" + std::string(t.text(n));
    case cbor::Kind::Uint:
    case cbor::Kind::Negint:
    case cbor::Kind::Bool:
      return "i" + std::to_string(static_cast<int>(n.kind)) + ":" + std::to_string(n.value);
    default:
      return "r" + std::string(t.raw(k));
  }
}

std::string key_label(const RawField &f) {
  cbor::Tree t(reinterpret_cast<const uint8_t *>(f.key.data()), f.key.size(), "key");
  if (t.node(0).kind == cbor::Kind::Text) return "'" + printable(std::string(t.text(0))) + "'";
  return "a non-text key";
}

void add_pair(MapPairs &m, const std::string &ckey, RawField f, const std::string &what) {
  auto it = m.pairs.find(ckey);
  if (it == m.pairs.end()) {
    m.order.push_back(ckey);
    m.pairs.emplace(ckey, std::move(f));
    return;
  }
  if (it->second.value != f.value)
    fail(ZT_E_EXISTS, what + " " + key_label(f) + " has different values in two inputs; refusing to pick one");
}

void add_map(MapPairs &m, const std::string &cbor_map, const std::string &what) {
  cbor::Tree t(reinterpret_cast<const uint8_t *>(cbor_map.data()), cbor_map.size(), what);
  if (t.node(0).kind != cbor::Kind::Map) fail(ZT_E_MANIFEST, what + " are not a CBOR map; cannot merge them");
  uint32_t k = t.first_child(0);
  for (uint64_t i = 0; i < t.node(0).value; ++i) {
    uint32_t v = t.next(k);
    add_pair(m, canonical_key(t, k), RawField{std::string(t.raw(k)), std::string(t.raw(v))}, what);
    k = t.next(v);
  }
}

std::string encode_map(const MapPairs &m) {
  std::string out;
  const uint64_t n = m.order.size();
  // Definite-length map head (major type 5), shortest form.
  if (n < 24) {
    out.push_back(static_cast<char>(0xa0 | n));
  } else {
    int bytes = n <= 0xff ? 1 : n <= 0xffff ? 2 : n <= 0xffffffffu ? 4 : 8;
    out.push_back(static_cast<char>(0xa0 | (bytes == 1 ? 24 : bytes == 2 ? 25 : bytes == 4 ? 26 : 27)));
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  for (const auto &k : m.order) {
    const RawField &f = m.pairs.at(k);
    out += f.key;
    out += f.value;
  }
  return out;
}

}  // namespace

extern "C" {

ZT_API zt_status zt_writer_copy_object(zt_writer *w, const zt_object *obj, const char *new_name, size_t new_name_len) {
  return guard([&] {
    zt_writer &wr = writer_ref(w, "zt_writer_copy_object");
    const zt_object &src = object_ref(obj, "zt_writer_copy_object");
    if (!new_name && new_name_len) invalid("zt_writer_copy_object: new_name is NULL with a non-zero length");
    const Object &o = *src.obj;
    if (o.status != ZT_OK)
      fail(o.status, "zt_writer_copy_object: cannot copy damaged " + where(o.name) + ": " + o.error);
    const std::string name = new_name ? std::string(new_name, new_name_len) : o.name;
    Writer &out = *wr.writer;
    out.begin_object(name, o.format, o.shape);
    if (o.has_attributes) out.set_object_attributes(name, o.attributes);
    if (!o.extra.empty()) out.set_object_extra(name, o.extra);
    for (const Component &c : o.components) copy_component(*src.reader, o, c, out, name);
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_copy_file_fields(zt_writer *w, const zt_file *const *files, size_t count) {
  return guard([&] {
    zt_writer &wr = writer_ref(w, "zt_writer_copy_file_fields");
    if (!files && count) invalid("zt_writer_copy_file_fields: files is NULL with a non-zero count");
    MapPairs attrs, extra;
    const std::string *first_attrs = nullptr;  // kept byte for byte when alone
    bool identical = true;
    for (size_t i = 0; i < count; ++i) {
      const Manifest &m = file_ref(files[i], "zt_writer_copy_file_fields").reader->manifest();
      if (m.has_attributes) {
        if (!first_attrs)
          first_attrs = &m.attributes;
        else if (*first_attrs != m.attributes)
          identical = false;
        add_map(attrs, m.attributes, "file attributes");
      }
      for (const RawField &f : m.extra) {
        cbor::Tree t(reinterpret_cast<const uint8_t *>(f.key.data()), f.key.size(), "manifest key");
        add_pair(extra, canonical_key(t, 0), f, "manifest field");
      }
    }
    Writer &out = *wr.writer;
    // One source of attributes (or identical ones): keep its bytes exactly.
    if (first_attrs) {
      std::string merged = identical ? *first_attrs : encode_map(attrs);
      // What the reader will check, checked before anything is written.
      cbor::Tree check(reinterpret_cast<const uint8_t *>(merged.data()), merged.size(), "merged file attributes");
      out.set_attributes(std::move(merged));
    }
    if (!extra.order.empty()) {
      std::vector<RawField> fields;
      for (const auto &k : extra.order) fields.push_back(extra.pairs.at(k));
      out.set_root_extra(std::move(fields));
    }
    return ZT_OK;
  });
}

}  // extern "C"
