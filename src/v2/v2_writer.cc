#include "v2/v2_writer.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "platform/file.h"
#include "types/host_order.h"
#include "util/error.h"
#include "v2/det_cbor_encode.h"
#include "v2/footer.h"
#include "v2/nfc.h"
#include "v2/v2_logical_types.h"
#include "v2/write_checks.h"
#include "v2/zstd_seekable_encode.h"

namespace zt::v2 {
namespace {

constexpr size_t kMaxName = 1024;
constexpr size_t kMaxRank = 64;

std::string digest_text(const char *alg, uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s:%016llx", alg, static_cast<unsigned long long>(h));
  return buf;
}

// The 1.2 names of the composite formats, for callers of the composite API.
std::string layout_id(const std::string &format) {
  if (format.empty()) return "dense";
  if (format == "sparse_csr") return "zt.sparse_csr/1";
  if (format == "sparse_coo") return "zt.sparse_coo/1";
  return format;
}

}  // namespace

struct Writer::Stream {
  size_t object = 0;
  size_t part = 0;
  uint64_t at = 0;       // where its bytes go in the layout file
  uint64_t stored = 0;   // bytes written there
  uint64_t decoded = 0;  // bytes the caller gave
  uint64_t saved_next_at = 0, saved_data_end = 0;
  zt_digest_alg alg = ZT_DIGEST_NONE;
  XXH3_state_t *xxh = nullptr;
  std::unique_ptr<Digester> sha;
  std::unique_ptr<ZstdSeekableEncoder> zstd;
  std::unique_ptr<ByteSwapFeed> to_le;  // big-endian callers, multi-byte dtypes
  const LogicalTypeV2 *type = nullptr;
  bool bool_values = false;
  uint8_t last_byte = 0;
  uint64_t whole_xxh3 = 0;  // a whole blob's xxh3, hashed in one call
  ~Stream() {
    if (xxh) XXH3_freeState(xxh);
  }
};

Writer::Writer(std::unique_ptr<Sink> sink, const WriterOptions &opts) : opts_(opts), sink_(std::move(sink)) {
  if (!opts_.canonical) {
    if (opts_.alignment < kAlignmentFloor || opts_.alignment % kAlignmentFloor)
      fail(ZT_E_INVALID_ARG, "v2 alignment must be a multiple of 4096 (at least 4096), not " +
                                 std::to_string(opts_.alignment) + " (v2 spec §2.4)");
  } else {
    if (opts_.alignment != kCanonicalAlignment)
      fail(ZT_E_INVALID_ARG, "canonical v2 places blobs at 65536 (v2 spec §6.3 rule 2); alignment " +
                                 std::to_string(opts_.alignment) + " needs canonical = 0");
    if (opts_.digest != ZT_DIGEST_XXH3)
      fail(ZT_E_INVALID_ARG,
           "canonical v2 gives every part an xxh3 digest (v2 spec §6.3 rule 4); another "
           "digest needs canonical = 0");
    if (opts_.encoding != ZT_ENCODING_RAW)
      fail(ZT_E_INVALID_ARG, "canonical v2 stores every part raw (v2 spec §6.3 rule 4); zstd needs canonical = 0");
  }
  if (opts_.digest != ZT_DIGEST_NONE && opts_.digest != ZT_DIGEST_XXH3 && opts_.digest != ZT_DIGEST_SHA256)
    fail(ZT_E_INVALID_ARG, "v2 digests are xxh3, sha256 or none (v2 spec §3.4)");
  if (opts_.encoding != ZT_ENCODING_RAW && opts_.encoding != ZT_ENCODING_ZSTD)
    fail(ZT_E_INVALID_ARG, "v2 encodings are raw or zstd (zt.zstd-seekable/1)");
  if (auto *file = dynamic_cast<FileSink *>(sink_.get())) {
    fd_ = file->positional_fd();
  } else {
    fd_ = platform::open_scratch_file(platform::temp_folder(), "the v2 writer's spool file");
    own_fd_ = true;
  }
  file_.attach(fd_);
  next_at_ = opts_.canonical ? kCanonicalAlignment : opts_.alignment;
  // Test hook (tests/capi/v2_write_test.cc): every blob of one length is a
  // sharing candidate, as if all their digests collided, so the tests can
  // show that sharing is decided on the bytes.
  const char *weak = std::getenv("ZT_TEST_V2_WEAK_CONTENT_KEY");
  weak_content_key_ = weak && *weak == '1';
  file_.write(0, kMagic, 8, "the magic");
}

Writer::~Writer() {
  discard();
}

void Writer::discard() noexcept {
  if (state_ == State::Open) state_ = State::Failed;
  stream_.reset();
  if (own_fd_ && fd_ >= 0) platform::close_file(fd_);
  fd_ = -1;
  if (sink_ && state_ != State::Finished) sink_->abandon();
}

void Writer::fail_writer() {
  state_ = State::Failed;
}

void Writer::check_open() const {
  if (state_ != State::Open) fail(ZT_E_MISUSE, "writer is already finished or failed");
}

void Writer::check_name(const std::string &name, const char *what) const {
  if (name.empty() || name.size() > kMaxName || name.find('\0') != std::string::npos)
    fail(ZT_E_NAME, std::string(what) + " '" + printable(name) +
                        "': names are non-empty, at most 1024 bytes, without U+0000 (v2 spec §3.5)");
  if (!valid_utf8(name.data(), name.size()))
    fail(ZT_E_NAME, std::string(what) + " '" + printable(name) + "' is not valid UTF-8 (v2 spec §3.5)");
  if (opts_.canonical && !is_nfc(name))
    fail(ZT_E_NAME,
         std::string(what) + " '" + printable(name) +
             "' is not in Unicode NFC, which canonical form requires (v2 spec §6.3 rule 5); its NFC form is '" +
             printable(to_nfc(name)) + "' (or write with canonical = 0)");
}

void Writer::set_attributes(const std::string &cbor) {
  check_open();
  attributes_ = canonical_cbor(reinterpret_cast<const uint8_t *>(cbor.data()), cbor.size(), 1, true, "file attributes");
}

void Writer::begin_object(const std::string &name, const std::string &layout, ShapeRef shape) {
  check_open();
  check_name(name, "object");
  const std::string id = layout_id(layout);
  if (!valid_utf8(id.data(), id.size()) || id.empty()) fail(ZT_E_NAME, where(name) + ": layout is not valid UTF-8");
  if (shape.ndim > kMaxRank)
    fail(ZT_E_SHAPE, where(name) + ": rank " + std::to_string(shape.ndim) + " is over 64 (v2 spec §3.3)");
  const auto numel = shape_numel(shape);
  if (!numel) fail(ZT_E_SHAPE, where(name) + ": the product of the shape overflows 64 bits (v2 spec §3.3)");
  // While names come in increasing order (most writers), uniqueness is one
  // comparison and a lookup a binary search; the first name out of order
  // builds the hash index.
  if (names_sorted_ && !objects_.empty() && !(objects_.back().name < name)) {
    names_sorted_ = false;
    index_.reserve(objects_.size() * 2);
    for (size_t i = 0; i < objects_.size(); ++i) index_.emplace(objects_[i].name, i);
  }
  if (!names_sorted_) {
    if (!index_.emplace(name, objects_.size()).second)
      fail(ZT_E_EXISTS, where(name) + ": an object of this name was already declared");
  }
  Object &o = objects_.emplace_back();
  o.name = name;
  o.layout = id;
  o.shape.assign(shape.begin(), shape.end());
  o.numel = *numel;
}

size_t Writer::lookup(const std::string &name) const {
  if (!names_sorted_) {
    auto it = index_.find(name);
    return it == index_.end() ? SIZE_MAX : it->second;
  }
  if (!objects_.empty() && objects_.back().name == name) return objects_.size() - 1;
  auto it = std::lower_bound(objects_.begin(), objects_.end(), name,
                             [](const Object &o, const std::string &n) { return o.name < n; });
  return it != objects_.end() && it->name == name ? static_cast<size_t>(it - objects_.begin()) : SIZE_MAX;
}

bool Writer::has_object(const std::string &name) const {
  return lookup(name) != SIZE_MAX;
}

void Writer::drop_object_if_empty(const std::string &name) {
  if (objects_.empty() || objects_.back().name != name || !objects_.back().parts.empty()) return;
  if (!names_sorted_) index_.erase(name);
  objects_.pop_back();
}

Writer::Object &Writer::object_for(const std::string &name) {
  const size_t i = lookup(name);
  if (i == SIZE_MAX) fail(ZT_E_NOT_FOUND, where(name) + ": no such object declared (begin it first)");
  return objects_[i];
}

void Writer::set_object_attributes(const std::string &name, const std::string &cbor) {
  check_open();
  Object &o = object_for(name);
  o.attributes = canonical_cbor(reinterpret_cast<const uint8_t *>(cbor.data()), cbor.size(), 3, true,
                                where(name) + ": attributes");
}

uint64_t Writer::next_offset(uint64_t at, uint64_t len) const {
  const uint64_t a = opts_.canonical ? kCanonicalAlignment : opts_.alignment;
  // Packing (§6.3 rule 2): the next boundary at or after this blob's end. A
  // zero-length blob takes no room, so the next blob starts at its offset
  // too; §2.4 exempts zero-length blobs from the identical-or-disjoint rule
  // for exactly this. The original's writer does the same (docs/v2.md).
  const uint64_t end = at + len;
  const uint64_t r = (end + a - 1) / a * a;
  if (end < at || r < end) fail(ZT_E_INVALID_ARG, "v2 writer: file offsets overflow 64 bits");
  return r;
}

Writer::Part &Writer::new_part(Object &o, const std::string &role, zt_dtype dtype, const PartOptions &opts,
                               bool &encode, int &level, zt_digest_alg &alg) {
  auto ctx = [&] { return where(o.name, role); };
  if (stream_) fail(ZT_E_MISUSE, ctx() + ": another blob is still being streamed (end it first)");
  check_name(role, "part");
  if (!dtype_name(dtype)) fail(ZT_E_DTYPE, ctx() + ": dtype " + std::to_string(dtype) + " is not a storage dtype");
  for (const auto &p : o.parts)
    if (p.name == role) fail(ZT_E_EXISTS, ctx() + ": part already written");
  if (o.layout == "dense" && role != "data")
    fail(ZT_E_COMPONENT_MISSING, ctx() + ": a dense object has exactly one part, named 'data' (v2 spec §5.1)");
  const zt_encoding enc = opts.encoding == ZT_ENCODING_UNKNOWN ? opts_.encoding : opts.encoding;
  if (enc != ZT_ENCODING_RAW && enc != ZT_ENCODING_ZSTD)
    fail(ZT_E_ENCODING, ctx() + ": v2 encodings are raw or zstd (zt.zstd-seekable/1)");
  if (opts_.canonical && enc != ZT_ENCODING_RAW)
    fail(ZT_E_ENCODING, ctx() + ": canonical v2 stores every part raw (v2 spec §6.3 rule 4; write with canonical = 0)");
  alg = opts.digest == ZT_DIGEST_UNKNOWN ? opts_.digest : opts.digest;
  if (alg != ZT_DIGEST_NONE && alg != ZT_DIGEST_XXH3 && alg != ZT_DIGEST_SHA256)
    fail(ZT_E_INVALID_ARG, ctx() + ": v2 digests are xxh3, sha256 or none (v2 spec §3.4)");
  if (opts_.canonical && alg != ZT_DIGEST_XXH3)
    fail(ZT_E_INVALID_ARG, ctx() + ": canonical v2 gives every part an xxh3 digest (v2 spec §6.3 rule 4)");
  Part p;
  p.name = role;
  if (dtype == ZT_BOOL) {  // v2 has no bool storage type: bool is a logical type over u8
    p.dtype = "u8";
    p.type = "bool";
  } else {
    p.dtype = dtype_name(dtype);
  }
  if (opts.has_type && !opts.logical_type.empty()) {
    if (!valid_utf8(opts.logical_type.data(), opts.logical_type.size()))
      fail(ZT_E_NAME, ctx() + ": logical type is not valid UTF-8");
    if (!p.type.empty() && opts.logical_type != p.type)
      fail(ZT_E_DTYPE, ctx() + ": a bool part cannot also be of logical type " + opts.logical_type);
    p.type = opts.logical_type;
    if (const LogicalTypeV2 *lt = logical_type_v2(p.type)) {
      if (p.dtype != lt->dtype)
        fail(ZT_E_DTYPE, ctx() + ": logical type '" + p.type + "' is stored as " + lt->dtype + ", not " + p.dtype +
                             " (v2 spec Appendix A)");
    }
  }
  encode = enc == ZT_ENCODING_ZSTD;
  level = opts.has_level ? opts.zstd_level : opts_.zstd_level;
  p.encoded = encode;
  o.parts.push_back(std::move(p));
  return o.parts.back();
}

void Writer::open_stream(const std::string &name, const std::string &role, zt_dtype dtype, const PartOptions &opts,
                         bool streaming) {
  check_open();
  Object &o = object_for(name);
  const size_t oi = static_cast<size_t>(&o - objects_.data());
  bool encode = false;
  int level = 0;
  zt_digest_alg alg = ZT_DIGEST_NONE;
  Part &p = new_part(o, role, dtype, opts, encode, level, alg);
  auto s = std::make_unique<Stream>();
  s->object = oi;
  s->part = o.parts.size() - 1;
  s->alg = alg;
  if (alg == ZT_DIGEST_XXH3 && streaming) {
    s->xxh = XXH3_createState();
    if (!s->xxh) {
      o.parts.pop_back();
      fail(ZT_E_NOMEM, "xxh3 state");
    }
    XXH3_64bits_reset(s->xxh);
  } else if (alg == ZT_DIGEST_SHA256) {
    s->sha = std::make_unique<Digester>(ZT_DIGEST_SHA256);
  }
  if (encode) s->zstd = std::make_unique<ZstdSeekableEncoder>(level);
  if (streaming && swaps(dtype)) s->to_le = std::make_unique<ByteSwapFeed>(dtype_size(dtype));
  s->type = p.type.empty() ? nullptr : logical_type_v2(p.type);
  s->bool_values = p.type == "bool";
  s->saved_next_at = next_at_;
  s->saved_data_end = data_end_;
  s->at = next_at_;
  // Canonical order is (object name, part name): while the parts come in
  // that order, the layout file is the final file.
  if (have_last_key_ && !(std::tie(last_key_object_, last_key_part_) < std::tie(o.name, p.name))) in_order_ = false;
  stream_ = std::move(s);
}

bool Writer::swaps(zt_dtype dtype) const {
  return opts_.caller_big_endian && dtype_size(dtype) > 1;
}

void Writer::store(const uint8_t *p, size_t n) {
  Stream &s = *stream_;
  if (s.bool_values)
    for (size_t i = 0; i < n; ++i)
      if (p[i] > 1)
        fail(ZT_E_INVALID_ARG, where(objects_[s.object].name, objects_[s.object].parts[s.part].name) +
                                   ": a bool element is " + std::to_string(p[i]) +
                                   "; bool values are 0 or 1 (v2 spec Appendix A)");
  if (n) s.last_byte = p[n - 1];
  if (s.xxh) XXH3_64bits_update(s.xxh, p, n);
  if (s.sha) s.sha->update(p, n);
  s.decoded += n;
  if (s.zstd) {
    s.zstd->update(p, n, [&](const uint8_t *q, size_t m) {
      file_.write(s.at + s.stored, q, m, "a blob");
      s.stored += m;
    });
  } else {
    file_.write(s.at + s.stored, p, n, "a blob");
    s.stored += n;
  }
}

void Writer::write_blob(const std::string &name, const std::string &role, zt_dtype dtype, const void *data, size_t len,
                        const PartOptions &opts) {
  check_open();
  if (!data && len) fail(ZT_E_INVALID_ARG, where(name, role) + ": data is NULL but length is " + std::to_string(len));
  open_stream(name, role, dtype, opts, /*streaming=*/false);
  Stream &s = *stream_;
  Object &o = objects_[s.object];
  // The size rules first: a wrong length is refused with nothing written.
  if (o.layout == "dense" && !s.zstd) {
    const LogicalTypeV2 *lt = s.type;
    const std::string &type = o.parts[s.part].type;
    if (type.empty() || lt) {
      const auto want = lt ? lt->size(o.numel) : checked_mul(o.numel, dtype_size(dtype));
      if (!want || *want != len) {
        const bool in_order = in_order_;
        o.parts.pop_back();
        stream_.reset();
        (void)in_order;
        fail(ZT_E_LENGTH, where(name, role) + ": " + std::to_string(len) + " bytes, but the shape and type need " +
                              (want ? std::to_string(*want) : std::string("more than 2^64")) +
                              " (v2 spec §5.1, dense size equation)");
      }
    }
  }
  std::vector<uint8_t> le;  // a big-endian caller's elements, as stored
  try {
    if (swaps(dtype)) {
      le = byteswapped_copy(data, len, dtype_size(dtype));
      data = le.data();
    }
    // Whole bytes in hand: hashed first, so a duplicate is found (and
    // confirmed on the bytes) before any of it is written.
    if (!s.zstd && s.alg != ZT_DIGEST_NONE) {
      auto *p = static_cast<const uint8_t *>(data);
      if (s.bool_values)
        for (size_t i = 0; i < len; ++i)
          if (p[i] > 1)
            fail(ZT_E_INVALID_ARG, where(name, role) + ": a bool element is " + std::to_string(p[i]) +
                                       "; bool values are 0 or 1 (v2 spec Appendix A)");
      if (s.alg == ZT_DIGEST_XXH3) s.whole_xxh3 = XXH3_64bits(p, len);
      if (s.sha) s.sha->update(p, len);
      s.decoded = len;
      s.last_byte = len ? p[len - 1] : 0;
      close_stream(p);
      return;
    }
    if (s.alg == ZT_DIGEST_XXH3 && !s.xxh) {  // zstd: hashed as it is encoded
      s.xxh = XXH3_createState();
      if (!s.xxh) fail(ZT_E_NOMEM, "xxh3 state");
      XXH3_64bits_reset(s.xxh);
    }
    store(static_cast<const uint8_t *>(data), len);
    close_stream(nullptr);
  } catch (...) {
    stream_.reset();
    fail_writer();
    throw;
  }
}

void Writer::blob_begin(const std::string &name, const std::string &role, zt_dtype dtype, const PartOptions &opts) {
  open_stream(name, role, dtype, opts, /*streaming=*/true);
}

void Writer::blob_append(const void *data, size_t len) {
  check_open();
  if (!stream_) fail(ZT_E_MISUSE, "no blob is being streamed (call zt_write_blob_begin first)");
  if (!data && len) fail(ZT_E_INVALID_ARG, "data is NULL but length is " + std::to_string(len));
  try {
    Stream &s = *stream_;
    if (s.to_le)
      s.to_le->feed(data, len, [&](const uint8_t *p, size_t n) { store(p, n); });
    else
      store(static_cast<const uint8_t *>(data), len);
  } catch (...) {
    stream_.reset();
    fail_writer();
    throw;
  }
}

void Writer::blob_end() {
  check_open();
  if (!stream_) fail(ZT_E_MISUSE, "no blob is being streamed");
  try {
    // A trailing partial element goes as it is: the size rules then refuse
    // the part, as they would from a little-endian caller.
    if (stream_->to_le) stream_->to_le->flush([&](const uint8_t *p, size_t n) { store(p, n); });
    close_stream(nullptr);
  } catch (...) {
    stream_.reset();
    fail_writer();
    throw;
  }
}

// `whole`: the caller's bytes, not yet written (write_blob); nullptr when
// they are in the layout file already (streamed).
void Writer::close_stream(const uint8_t *whole) {
  Stream &s = *stream_;
  Object &o = objects_[s.object];
  Part &p = o.parts[s.part];
  auto ctx = [&] { return where(o.name, p.name); };
  if (s.zstd)
    s.zstd->finish([&](const uint8_t *q, size_t m) {
      file_.write(s.at + s.stored, q, m, "a blob");
      s.stored += m;
    });
  if (o.layout == "dense") {
    const auto want =
        s.type ? s.type->size(o.numel)
               : (p.type.empty() ? checked_mul(o.numel, dtype_size(dtype_from_short_name(p.dtype))) : std::nullopt);
    if ((s.type || p.type.empty()) && (!want || *want != s.decoded))
      fail(ZT_E_LENGTH, ctx() + ": " + std::to_string(s.decoded) + " bytes, but the shape and type need " +
                            (want ? std::to_string(*want) : std::string("more than 2^64")) +
                            " (v2 spec §5.1, dense size equation)");
    if (p.type == "f4_e2m1" && (o.numel & 1) && (s.last_byte & 0xF0))
      fail(ZT_E_INVALID_ARG,
           ctx() + ": the unused high nibble of the last f4_e2m1 byte must be zero (v2 spec Appendix A)");
  }
  p.decoded_length = s.decoded;
  uint64_t content_hash = 0;
  if (s.alg == ZT_DIGEST_XXH3) {
    content_hash = s.xxh ? XXH3_64bits_digest(s.xxh) : s.whole_xxh3;
    p.digest = digest_text("xxh3", content_hash);
  }
  if (s.sha) {
    p.digest = s.sha->finish_string();
    content_hash = std::strtoull(p.digest.substr(7, 16).c_str(), nullptr, 16);
  }
  const uint64_t stored = whole ? s.decoded : s.stored;

  // Sharing: the same decoded bytes (same length and digest, then the bytes
  // themselves) as a raw blob already placed.
  // The key is the length and (the first 64 bits of) the digest; any
  // match is confirmed on the bytes, so a collision only costs a compare.
  const bool shareable = !p.encoded && !p.digest.empty();
  const uint64_t key = stored * 0x9E3779B97F4A7C15ull ^ (weak_content_key_ ? 0 : content_hash);
  if (shareable) {
    const size_t first = by_content_.find(key);
    if (first != SIZE_MAX) {
      for (size_t b = first; b != SIZE_MAX; b = blobs_[b].same_key) {
        if (blobs_[b].length == stored && same_bytes(blobs_[b].at, s.at, stored, whole)) {
          p.blob = b;
          if (!whole) {  // take the streamed copy back
            next_at_ = s.saved_next_at;
            data_end_ = s.saved_data_end;
            file_.cut(std::max<uint64_t>(data_end_, 8));
          }
          have_last_key_ = true;
          if (in_order_) {
            last_key_object_ = o.name;
            last_key_part_ = p.name;
          }
          stream_.reset();
          return;
        }
      }
    }
  }
  if (whole && stored) file_.write(s.at, whole, static_cast<size_t>(stored), "a blob");
  Blob b;
  b.at = s.at;
  b.length = stored;
  blobs_.push_back(b);
  p.blob = blobs_.size() - 1;
  if (shareable) {
    const size_t first = by_content_.insert(key, p.blob);
    if (first != SIZE_MAX) {  // chained behind the first: a collision (or the test hook) costs a compare
      blobs_[p.blob].same_key = blobs_[first].same_key;
      blobs_[first].same_key = p.blob;
    }
  }
  data_end_ = s.at + stored;
  next_at_ = next_offset(s.at, stored);
  have_last_key_ = true;
  if (in_order_) {
    last_key_object_ = o.name;
    last_key_part_ = p.name;
  }
  stream_.reset();
}

}  // namespace zt::v2
