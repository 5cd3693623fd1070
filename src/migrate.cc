#include "migrate.h"

#include <algorithm>

#include "component_stream.h"
#include "composite/parts.h"
#include "migrate/sparse_to_v2.h"
#include "migrate/v2_to_1x.h"
#include "platform/file.h"
#include "util/error.h"

namespace zt {
namespace {

// Components decoded whole up to this size (one-shot compression, the same
// bytes as ever); larger ones are streamed through kStreamPiece buffers.
constexpr uint64_t kWholeCopyMax = uint64_t{64} << 20;
constexpr size_t kStreamPiece = size_t{8} << 20;
// Index entries are widened up to 8x: 1 MiB of narrow ones at a time.
constexpr size_t kIndexPiece = size_t{1} << 20;

}  // namespace

bool copy_sparse_index_as_u64(const Reader &in, const Object &o, const Component &c, Writer &w, const std::string &name,
                              const BlobOptions &bo) {
  if (!is_sparse_index(o.format, c.role) || c.dtype == ZT_U64 || !dtype_is_integer(c.dtype)) return false;
  const std::string ctx = where(o.name, c.role);
  ComponentStream s(in, nullptr, o, c);
  std::vector<uint8_t> piece(kIndexPiece);
  w.blob_begin(name, c.role, ZT_U64, bo);
  uint64_t first = 0;
  while (size_t n = s.read(piece.data(), piece.size())) {
    const std::vector<uint64_t> wide = index_bytes_to_u64(piece.data(), n, c.dtype, ctx, ZT_E_SPARSE_INDEX, first);
    w.blob_append(wide.data(), wide.size() * sizeof(uint64_t));
    first += wide.size();
  }
  w.blob_end();
  return true;
}

bool v2_keeps_u32_indices(const Object &o, const Writer &w) {
  if (!w.writes_v2()) return false;
  bool any = false;
  for (const Component &c : o.components) {
    if (!is_sparse_index(o.format, c.role)) continue;
    if (c.dtype != ZT_U32) return false;
    any = true;
  }
  return any;
}

void copy_objects(const Reader &in, Writer &w, const MigrateOptions &opts) {
  // A v2 writer places blobs in name order: handed over in that order, each
  // is placed once instead of being reordered at finish.
  const std::vector<Object> &objects = in.manifest().objects;
  std::vector<size_t> order(objects.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (w.writes_v2())
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return objects[a].name < objects[b].name; });
  // A v2 file into a 1.2 writer: every object's 1.2 form, or the refusal
  // naming what 1.2 cannot hold, before anything is written.
  const bool to_1x = in.manifest().spec == SpecVersion::V2 && !w.writes_v2();
  std::vector<migrate::Object1x> plan;
  if (to_1x) plan = migrate::plan_v2_to_1x(in.manifest());
  for (size_t i : order) {
    const Object &o = objects[i];
    if (o.status != ZT_OK) fail(o.status, "cannot migrate: " + o.error);
    check_sparse_data_for_v2(in, o, w);
    const migrate::Object1x *o1x = to_1x ? &plan[i] : nullptr;
    w.begin_object(o.name, o1x ? o1x->format : o.format, o.shape);
    if (o1x ? o1x->has_attributes : o.has_attributes)
      w.set_object_attributes(o.name, o1x ? o1x->attributes : o.attributes);
    if (!o.extra.empty()) w.set_object_extra(o.name, o.extra);
    const bool keep_u32 = v2_keeps_u32_indices(o, w);
    for (size_t j = 0; j < o.components.size(); ++j) {
      const Component &c = o.components[j];
      const std::string &role = o1x ? o1x->parts[j].role : c.role;
      const zt_dtype dtype = o1x ? o1x->parts[j].dtype : c.dtype;
      BlobOptions bo;
      bo.encoding = opts.recompress > 0 ? ZT_ENCODING_ZSTD : opts.recompress < 0 ? ZT_ENCODING_RAW : c.encoding;
      bo.zstd_level = opts.zstd_level;
      bo.has_level = true;
      if (opts.digest != ZT_DIGEST_UNKNOWN) {
        bo.digest = opts.digest;
      } else {
        // Keep the algorithm; an unknown one cannot be recomputed, so it is
        // dropped rather than copied over bytes it no longer describes.
        zt_digest_alg a = c.has_digest ? c.parsed_digest.alg : ZT_DIGEST_NONE;
        bo.digest = digest_for_1x(a);
      }
      // v2's bool is a logical type over u8; a 1.x file has the dtype itself.
      bo.has_type = o1x ? o1x->parts[j].has_type : c.has_type && !(c.dtype == ZT_BOOL && c.logical_type == "bool");
      bo.logical_type = o1x ? o1x->parts[j].logical_type : c.logical_type;
      bo.extra = c.extra;
      w.adapt_copy_options(bo);
      // Verify the source before copying, so damage is not laundered into a
      // freshly digested file.
      in.verify_component(o, c, false);
      // v2 takes u32 sparse indices as they are; 1.2 wants u64.
      if (!keep_u32 && copy_sparse_index_as_u64(in, o, c, w, o.name, bo)) continue;
      size_t len = 0;
      const uint8_t *view = nullptr;
      if (c.encoding == ZT_ENCODING_RAW && in.source_of(c).data() && !needs_swap(c)) {
        view = in.view(o, c, &len);
        w.write_blob(o.name, role, dtype, view, len, bo);
      } else if (c.decoded_known && c.decoded_length <= kWholeCopyMax) {
        std::vector<uint8_t> bytes = in.read_vector(o, c);
        w.write_blob(o.name, role, dtype, bytes.data(), bytes.size(), bo);
      } else {
        // Large (or of unknown size): decoded piece by piece into a
        // streamed blob, so memory stays bounded whatever the size.
        ComponentStream s(in, nullptr, o, c);
        std::vector<uint8_t> piece(kStreamPiece);
        w.blob_begin(o.name, role, dtype, bo);
        while (size_t n = s.read(piece.data(), piece.size())) w.blob_append(piece.data(), n);
        w.blob_end();
      }
    }
  }
}

void migrate_file(const std::string &in_path, const std::string &out_path, const MigrateOptions &opts) {
  if (in_path == out_path || platform::same_file(in_path, out_path))
    fail(ZT_E_INVALID_ARG, "migrate: output '" + out_path + "' is the input file; refusing to overwrite it");
  ReaderOptions ro;
  auto in = Reader::open(in_path, ro);
  // Refused before the output exists: what 1.2 cannot hold (docs/v2.md).
  if (opts.format != 2 && in->manifest().spec == SpecVersion::V2) (void)migrate::plan_v2_to_1x(in->manifest());
  WriterOptions wo;
  wo.sync = opts.sync;
  if (opts.format == 2) {
    wo.format = 2;
    wo.v2.canonical = opts.canonical;
    wo.v2.sync = opts.sync;
    wo.v2.zstd_level = opts.zstd_level;
    if (!opts.canonical) {
      wo.v2.alignment = v2::kCanonicalAlignment;
      if (opts.digest == ZT_DIGEST_SHA256 || opts.digest == ZT_DIGEST_NONE) wo.v2.digest = opts.digest;
    }
  }
  // A rewrite of a user's file (zt migrate, compress, decompress): checked
  // by an independent reader before it replaces anything at out_path.
  wo.verify_before_replace = true;
  Writer w(out_path, wo);
  const Manifest &m = in->manifest();
  if (m.has_attributes) w.set_attributes(m.attributes);
  if (!m.extra.empty()) w.set_root_extra(m.extra);
  copy_objects(*in, w, opts);
  w.finish();
}

}  // namespace zt
