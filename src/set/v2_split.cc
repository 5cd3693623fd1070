// make_v2_sharded (set/v2_split.h): the root manifest is spliced from the
// pieces' manifests (deterministic CBOR, v2/det_cbor*): every object as it
// is, each part map with a "shard" entry added, the maps re-sorted.
#include "set/v2_split.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "container/layout.h"
#include "container/source.h"
#include "digest/digest.h"
#include "platform/file.h"
#include "util/error.h"
#include "v2/det_cbor.h"
#include "v2/det_cbor_encode.h"
#include "v2/footer.h"
#include "v2/manifest.h"

namespace zt {
namespace {

using v2::cbor::Cursor;
using v2::cbor::Head;

struct Piece {
  const ShardPiece *in;
  uint64_t data_end = 0;  // where its last blob ends (8: none)
  std::string manifest;   // its bytes
};

std::string encoded_text(const std::string &s) {
  v2::DetCbor o;
  o.text(s);
  return o.out;
}

void put_le(std::string &b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
}

std::string footer(uint64_t offset, uint64_t length, uint64_t hash) {
  std::string f;
  put_le(f, offset, 8);
  put_le(f, length, 8);
  put_le(f, hash, 8);
  put_le(f, v2::kVersion, 4);
  put_le(f, 0, 4);
  f.append(reinterpret_cast<const char *>(v2::kMagic), 8);
  return f;
}

// Appends `bytes` at the end of the file at `path` (created when `create`),
// then flushes it to the disk when `sync`.
void append_file(const std::string &path, const std::string &bytes, bool create, bool sync) {
  std::error_code ec;
  if (create && std::filesystem::exists(std::filesystem::u8path(path), ec))
    fail(ZT_E_IO, "'" + printable(path) + "' exists already");
  std::FILE *f = platform::open_stdio(path, create ? "wb" : "ab");  // UTF-8 paths
  if (!f) fail(ZT_E_IO, "'" + printable(path) + "': cannot open for writing: " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0;
  const bool synced = !sync || platform::sync_stdio(f);
  const int err = errno;
  std::fclose(f);
  if (!ok || !synced) fail(ZT_E_IO, "'" + printable(path) + "': write failed: " + std::strerror(err));
}

// A map item's entries as (encoded key, encoded value) pairs.
std::vector<std::pair<std::string, std::string>> entries_of(const Cursor &cur, size_t pos) {
  const Head h = cur.head(pos);
  std::vector<std::pair<std::string, std::string>> out;
  size_t p = h.payload;
  for (uint64_t i = 0; i < h.arg; ++i) {
    const size_t v = cur.skip(p), end = cur.skip(v);
    out.emplace_back(std::string(cur.span(p, v)), std::string(cur.span(v, end)));
    p = end;
  }
  return out;
}

std::string sorted_map(std::vector<std::pair<std::string, std::string>> &entries, const std::string &what) {
  v2::DetCbor o;
  v2::emit_sorted_map(o, entries, what);
  return o.out;
}

}  // namespace

void make_v2_sharded(const std::vector<ShardPiece> &pieces, zt_digest_alg alg, const std::string &root_path,
                     bool sync) {
  if (alg != ZT_DIGEST_SHA256 && alg != ZT_DIGEST_XXH3)
    fail(ZT_E_INVALID_ARG, "v2 shards: the whole-file digest is sha256 or xxh3 (spec §7.1)");
  // Check every piece before anything is changed.
  std::vector<Piece> ps;
  for (const ShardPiece &sp : pieces) {
    bool name_ok = !sp.name.empty() && sp.name.size() <= 64 && sp.name[0] != '.';
    for (char c : sp.name)
      name_ok = name_ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                            c == '_' || c == '-');
    if (!name_ok)
      fail(ZT_E_INVALID_ARG, "v2 shards: shard name '" + printable(sp.name) +
                                 "' is not 1-64 bytes of A-Z a-z 0-9 . _ - not starting with '.' (spec §7.1)");
    const std::string what = "'" + printable(sp.path) + "'";
    auto src = open_pread_source(sp.path);
    const ManifestLocation loc = locate_manifest(*src, v2::kMaxManifestSize);
    if (loc.container != Container::V2 || loc.data_shard)
      fail(ZT_E_WRONG_FORMAT, what + ": not a zTensor v2 file with a manifest");
    const Manifest m = v2::read_manifest(*src, loc);  // every rule of §3.6
    if (!m.shards.empty()) fail(ZT_E_INVALID_ARG, what + ": already names shards of its own");
    if (loc.offset + loc.size != src->size() - v2::kFooterSize)
      fail(ZT_E_INVALID_ARG, what + ": its manifest is not its last blob");
    uint64_t data_end = 8;
    for (const Object &o : m.objects)
      for (const Component &c : o.components) data_end = std::max(data_end, c.offset + c.length);
    Piece p{&sp, data_end, std::string(static_cast<size_t>(loc.size), '\0')};
    src->read(loc.offset, p.manifest.size(), &p.manifest[0]);
    ps.push_back(std::move(p));
  }
  // The root's objects: each piece's, with "shard" in every part.
  std::vector<std::pair<std::string, std::string>> objects;
  std::string attributes;
  for (size_t k = 0; k < ps.size(); ++k) {
    const Piece &p = ps[k];
    const Cursor cur(reinterpret_cast<const uint8_t *>(p.manifest.data()), p.manifest.size());
    const std::string shard_value = encoded_text(p.in->name);
    for (auto &[key, value] : entries_of(cur, 0)) {
      const Cursor kc(reinterpret_cast<const uint8_t *>(key.data()), key.size());
      const std::string_view name = kc.text(kc.head(0));
      if (name == "attributes" && k == 0) attributes = value;
      if (name != "objects") continue;
      const Cursor oc(reinterpret_cast<const uint8_t *>(value.data()), value.size());
      for (auto &[okey, ovalue] : entries_of(oc, 0)) {
        const Cursor obc(reinterpret_cast<const uint8_t *>(ovalue.data()), ovalue.size());
        auto fields = entries_of(obc, 0);
        for (auto &[fkey, fvalue] : fields) {
          if (fkey != encoded_text("parts")) continue;
          const Cursor pc(reinterpret_cast<const uint8_t *>(fvalue.data()), fvalue.size());
          auto parts = entries_of(pc, 0);
          for (auto &[pkey, pvalue] : parts) {
            const Cursor partc(reinterpret_cast<const uint8_t *>(pvalue.data()), pvalue.size());
            auto pf = entries_of(partc, 0);
            pf.emplace_back(encoded_text("shard"), shard_value);
            pvalue = sorted_map(pf, "part");
          }
          fvalue = sorted_map(parts, "parts");
        }
        objects.emplace_back(okey, sorted_map(fields, "object"));
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> root;
  try {
    root.emplace_back(encoded_text("objects"), sorted_map(objects, "the objects of the shards"));
  } catch (const Error &e) {
    fail(ZT_E_DUPLICATE_KEY, std::string("v2 shards: an object name is in two pieces: ") + e.what());
  }
  if (!attributes.empty()) root.emplace_back(encoded_text("attributes"), attributes);
  // Each piece becomes a data shard: cut where its last blob ends (the
  // manifest and the padding before it go), then a footer of zeros. Its
  // identity is taken after.
  std::vector<std::pair<std::string, std::string>> table;
  for (const Piece &p : ps) {
    std::error_code ec;
    std::filesystem::resize_file(std::filesystem::u8path(p.in->path), p.data_end, ec);
    if (ec) fail(ZT_E_IO, "'" + printable(p.in->path) + "': cannot cut at its manifest: " + ec.message());
    append_file(p.in->path, footer(0, 0, 0), false, sync);
    auto src = open_pread_source(p.in->path);
    Digester d(alg);
    std::vector<uint8_t> buf(size_t{4} << 20);
    for (uint64_t done = 0; done < src->size();) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), src->size() - done));
      src->read(done, n, buf.data());
      d.update(buf.data(), n);
      done += n;
    }
    std::vector<std::pair<std::string, std::string>> id = {{encoded_text("size"), ""},
                                                           {encoded_text("digest"), encoded_text(d.finish_string())}};
    v2::DetCbor size;
    size.uint(src->size());
    id[0].second = size.out;
    table.emplace_back(encoded_text(p.in->name), sorted_map(id, "shard"));
  }
  root.emplace_back(encoded_text("shards"), sorted_map(table, "the shard table"));
  const std::string manifest = sorted_map(root, "the root manifest");
  // The root: magic, the manifest at 4096 (the floor: it holds no blob of
  // its own), the footer.
  std::string bytes(4096, '\0');
  std::memcpy(&bytes[0], v2::kMagic, 8);
  bytes += manifest;
  bytes += footer(4096, manifest.size(), xxh3_64(manifest.data(), manifest.size()));
  append_file(root_path, bytes, true, sync);
}

}  // namespace zt
