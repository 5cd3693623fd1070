#include "writer.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "composite/parts.h"
#include "container/layout.h"
#include "manifest/decode.h"
#include "manifest/encode.h"
#include "platform/file.h"
#include "reader.h"
#include "types/dtype.h"
#include "types/host_order.h"
#include "util/endian.h"
#include "util/error.h"

namespace zt {
namespace {

constexpr size_t kParallelZstdThreshold = size_t{4} << 20;
// From here a blob's digest runs on a thread of its own (see write_digested).
constexpr size_t kParallelDigestThreshold = size_t{1} << 20;

// Read once: on glibc each call reads /sys, and it is asked per large blob.
unsigned cores() {
  static const unsigned n = std::thread::hardware_concurrency();
  return n;
}

void put_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

bool is_sparse_format(const std::string &format) {
  return format == "sparse_csr" || format == "sparse_coo";
}

v2::PartOptions v2_part_options(const BlobOptions &b) {
  v2::PartOptions p;
  p.encoding = b.encoding;
  p.zstd_level = b.zstd_level;
  p.has_level = b.has_level;
  p.digest = b.digest;
  p.has_type = b.has_type;
  p.logical_type = b.logical_type;
  return p;
}

}  // namespace

namespace {

const WriterOptions &checked(const WriterOptions &opts) {
  if (opts.format == 2) return opts;  // v2::Writer checks its own
  if (opts.encoding != ZT_ENCODING_RAW && opts.encoding != ZT_ENCODING_ZSTD)
    fail(ZT_E_INVALID_ARG, "writer default encoding must be raw or zstd");
  if (opts.digest > ZT_DIGEST_SHA256) fail(ZT_E_INVALID_ARG, "writer default digest must be none, crc32c or sha256");
  return opts;
}

}  // namespace

Writer::Writer(const std::string &path, const WriterOptions &opts)
    : Writer(std::make_unique<FileSink>((checked(opts), path)), opts) {}

Writer::Writer(std::unique_ptr<Sink> sink, const WriterOptions &opts) : opts_(checked(opts)) {
  if (opts.format == 2) {
    v2::WriterOptions v2o = opts.v2;
    if (opts.verify_before_replace) v2o.before_commit = [](Sink &s) { check_written(s); };
    v2_ = std::make_unique<v2::Writer>(std::move(sink), v2o);
    return;
  }
  if (opts.format != 1) fail(ZT_E_INVALID_ARG, "format generation must be 1 (spec 1.2) or 2 (v2)");
  sink_ = std::move(sink);
  sink_->write(kMagicV1, 8);
  manifest_.version = ZT_FORMAT_VERSION;
  manifest_.spec = SpecVersion::V1_2;
}

Writer::~Writer() {
  discard();
}

void Writer::check_open() const {
  if (state_ != State::Open) fail(ZT_E_MISUSE, "writer is already finished or failed");
}

void Writer::set_attributes(std::string cbor) {
  if (v2_) return v2_->set_attributes(cbor);
  check_open();
  manifest_.has_attributes = true;
  manifest_.attributes = std::move(cbor);
}

void Writer::adapt_copy_options(BlobOptions &bo) const {
  if (!v2_) return;
  bo.digest = ZT_DIGEST_UNKNOWN;
  if (opts_.v2.canonical) bo.encoding = ZT_ENCODING_RAW;
  bo.has_level = false;
  bo.extra.clear();
}

void Writer::set_root_extra(std::vector<RawField> extra) {
  if (v2_) return;  // v2 has no place for unknown 1.x fields (docs/v2.md, Writing)
  check_open();
  manifest_.extra = std::move(extra);
}

void Writer::begin_object(const std::string &name, const std::string &format, ShapeRef shape) {
  if (v2_) return v2_->begin_object(name, format, shape);
  check_open();
  if (!valid_utf8(name.data(), name.size())) fail(ZT_E_NAME, where(name) + ": name is not valid UTF-8");
  if (!valid_utf8(format.data(), format.size())) fail(ZT_E_NAME, where(name) + ": format is not valid UTF-8");
  if (!shape_numel(shape)) fail(ZT_E_SHAPE, where(name) + ": the product of the shape overflows 64 bits");
  // Names in increasing order need no index (see in_name_order_).
  auto &objs = manifest_.objects;
  if (!in_name_order_ || (!objs.empty() && !(objs.back().name < name))) {
    if (in_name_order_) {  // first name out of order: from now on, a hash index
      for (size_t i = 0; i < objs.size(); ++i) index_.insert(objs[i].name, i, name_of());
      in_name_order_ = false;
    }
    if (!index_.insert(name, objs.size(), name_of()))
      fail(ZT_E_EXISTS, where(name) + ": an object of this name was already declared");
  }
  Object &o = manifest_.objects.emplace_back();
  o.name = name;
  o.format = format.empty() ? "dense" : format;
  o.has_format = true;
  o.shape.assign(shape.begin(), shape.end());
  o.numel = *shape_numel(shape);
}

void Writer::drop_object_if_empty(const std::string &name) {
  if (v2_) return v2_->drop_object_if_empty(name);
  if (manifest_.objects.empty() || manifest_.objects.back().name != name) return;
  if (!manifest_.objects.back().components.empty()) return;
  if (!in_name_order_) index_.erase(name, name_of());
  manifest_.objects.pop_back();
}

size_t Writer::lookup(const std::string &name) const {
  const auto &objs = manifest_.objects;
  if (!in_name_order_) return index_.find(name, name_of());
  auto it = std::lower_bound(objs.begin(), objs.end(), name,
                             [](const Object &o, const std::string &n) { return o.name < n; });
  return it != objs.end() && it->name == name ? static_cast<size_t>(it - objs.begin()) : NameIndex::npos;
}

size_t Writer::object_index(const std::string &name) const {
  // Objects are nearly always written right after they are declared.
  if (!manifest_.objects.empty() && manifest_.objects.back().name == name) return manifest_.objects.size() - 1;
  size_t i = lookup(name);
  if (i == NameIndex::npos) fail(ZT_E_NOT_FOUND, where(name) + ": no such object declared (begin it first)");
  return i;
}

Object &Writer::object_for(const std::string &name) {
  return manifest_.objects[object_index(name)];
}

const Object *Writer::find_object(const std::string &name) const {
  size_t i = lookup(name);
  return i == NameIndex::npos ? nullptr : &manifest_.objects[i];
}

void Writer::set_object_attributes(const std::string &name, std::string cbor) {
  if (v2_) return v2_->set_object_attributes(name, cbor);
  check_open();
  Object &o = object_for(name);
  o.has_attributes = true;
  o.attributes = std::move(cbor);
}

void Writer::set_object_extra(const std::string &name, std::vector<RawField> extra) {
  if (v2_) return;  // as set_root_extra
  check_open();
  object_for(name).extra = std::move(extra);
}

unsigned Writer::zstd_threads(size_t len) const {
  if (len < kParallelZstdThreshold) return 0;
  unsigned t = opts_.threads ? opts_.threads : cores();
  return t > 1 ? t : 0;
}

Component &Writer::new_component(Object &o, const std::string &role, zt_dtype dtype, const BlobOptions &opts) {
  // Built only for a message: small blobs are written by the hundred thousand.
  auto ctx = [&] { return where(o.name, role); };
  if (stream_) fail(ZT_E_MISUSE, ctx() + ": another blob is still being streamed (end it first)");
  if (!dtype_name(dtype)) fail(ZT_E_DTYPE, ctx() + ": dtype " + std::to_string(dtype) + " is not a storage dtype");
  if (!valid_utf8(role.data(), role.size())) fail(ZT_E_NAME, ctx() + ": role is not valid UTF-8");
  for (const auto &c : o.components)
    if (c.role == role) fail(ZT_E_EXISTS, ctx() + ": component already written");
  if (dtype != ZT_U64 && is_sparse_index(o.format, role))
    fail(ZT_E_INDEX_DTYPE,
         ctx() + ": index components of " + o.format + " must be u64 (spec 1.2), not " + dtype_name(dtype));
  Component c;
  c.role = role;
  c.dtype = dtype;
  c.dtype_name = dtype_name(dtype);
  c.encoding = opts.encoding == ZT_ENCODING_UNKNOWN ? opts_.encoding : opts.encoding;
  if (c.encoding != ZT_ENCODING_RAW && c.encoding != ZT_ENCODING_ZSTD)
    fail(ZT_E_ENCODING, ctx() + ": encoding must be raw or zstd");
  c.encoding_name = c.encoding == ZT_ENCODING_ZSTD ? "zstd" : "raw";
  zt_digest_alg alg = opts.digest == ZT_DIGEST_UNKNOWN ? opts_.digest : opts.digest;
  if (alg > ZT_DIGEST_SHA256) fail(ZT_E_INVALID_ARG, ctx() + ": digest must be none, crc32c or sha256");
  c.parsed_digest.alg = alg;
  c.has_digest = alg != ZT_DIGEST_NONE;
  if (opts.has_type) {
    if (!valid_utf8(opts.logical_type.data(), opts.logical_type.size()))
      fail(ZT_E_NAME, ctx() + ": logical type is not valid UTF-8");
    c.has_type = true;
    c.logical_type = opts.logical_type;
    if (const LogicalType *lt = logical_type_find(c.logical_type)) {
      if (lt->storage != dtype)
        fail(ZT_E_DTYPE, ctx() + ": logical type '" + c.logical_type + "' must be stored as " +
                             dtype_name(lt->storage) + ", not " + c.dtype_name);
      c.ratio = lt->ratio;
    }
  }
  c.extra = opts.extra;
  o.components.push_back(std::move(c));
  return o.components.back();
}

void Writer::write_blob(const std::string &name, const std::string &role, zt_dtype dtype, const void *data, size_t len,
                        const BlobOptions &opts) {
  if (v2_) return v2_->write_blob(name, role, dtype, data, len, v2_part_options(opts));
  check_open();
  if (!data && len) fail(ZT_E_INVALID_ARG, where(name, role) + ": data is NULL but length is " + std::to_string(len));
  open_blob(name, role, dtype, opts, /*streaming=*/false);
  refuse_before_writing(len);
  std::vector<uint8_t> le;  // a big-endian host's elements, stored little-endian
  try {
    if (kHostBigEndian && dtype_size(dtype) > 1) {
      le = byteswapped_copy(data, len, dtype_size(dtype));
      data = le.data();
    }
    Stream &s = *stream_;
    Component &c = manifest_.objects[s.object].components[s.component];
    if (c.encoding == ZT_ENCODING_ZSTD) {
      // Whole blob at once: one-shot compression, multithreaded when large.
      int level = opts.has_level ? opts.zstd_level : opts_.zstd_level;
      zstd_compress_each(data, len, level, zstd_threads(len), [&](const uint8_t *p, size_t n) { emit(c, p, n); });
      s.raw_bytes = len;
    } else {
      write_digested(s.digest.get(), data, len);
      s.raw_bytes = len;
    }
    blob_end();
  } catch (...) {
    state_ = State::Failed;
    throw;
  }
}

// A whole blob's size is known before any of it is written: checked against
// the shape (the rules blob_end applies) first, a wrong one is refused with
// the writer still usable and nothing of it in the file, where a failure
// after writing would have to fail the whole writer.
void Writer::refuse_before_writing(size_t len) {
  Stream &s = *stream_;
  Object &o = manifest_.objects[s.object];
  // Checked in place (blob_end sets these fields again): a copy of the
  // component per blob shows in writes of many tiny tensors.
  Component &c = o.components[s.component];
  const bool zstd = c.encoding == ZT_ENCODING_ZSTD;
  c.length = zstd ? 0 : len;
  c.has_uncompressed_length = zstd;
  c.uncompressed_length = len;
  DecodeLimits limits;
  limits.max_decoded_size = UINT64_MAX;
  const uint64_t data_end = manifest_.data_end;
  manifest_.data_end = c.offset + c.length;
  validate_component(c, o, manifest_, limits);
  manifest_.data_end = data_end;
  c.length = 0;
  if (c.status == ZT_OK) return;
  const zt_status status = c.status;
  const std::string error = c.error;
  o.components.pop_back();  // only padding was written: the next blob aligns past it
  stream_.reset();
  fail(status, error);
}

void Writer::blob_begin(const std::string &name, const std::string &role, zt_dtype dtype, const BlobOptions &opts) {
  if (v2_) return v2_->blob_begin(name, role, dtype, v2_part_options(opts));
  open_blob(name, role, dtype, opts, /*streaming=*/true);
}

void Writer::open_blob(const std::string &name, const std::string &role, zt_dtype dtype, const BlobOptions &opts,
                       bool streaming) {
  check_open();
  const size_t object = object_index(name);
  Object &o = manifest_.objects[object];
  Component &c = new_component(o, role, dtype, opts);
  try {
    uint64_t off = align_up(sink_->position());
    sink_->write_zeros(static_cast<size_t>(off - sink_->position()));
    c.offset = off;
    auto s = std::make_unique<Stream>();
    s->object = object;
    s->component = o.components.size() - 1;
    // A whole blob is compressed in one shot by write_blob: only a streamed
    // one needs a streaming context (and its worker threads).
    if (streaming && c.encoding == ZT_ENCODING_ZSTD)
      s->zstd = std::make_unique<ZstdStream>(opts.has_level ? opts.zstd_level : opts_.zstd_level,
                                             zstd_threads(kParallelZstdThreshold));
    if (c.has_digest) s->digest = std::make_unique<Digester>(c.parsed_digest.alg);
    if (streaming && kHostBigEndian && dtype_size(dtype) > 1)
      s->to_le = std::make_unique<ByteSwapFeed>(dtype_size(dtype));
    stream_ = std::move(s);
  } catch (...) {
    o.components.pop_back();
    state_ = State::Failed;
    throw;
  }
}

void Writer::emit(Component &c, const uint8_t *p, size_t n) {
  if (stream_->digest) stream_->digest->update(p, n);
  sink_->write(p, n);
  c.length += n;
}

void Writer::store_streamed(Stream &s, Component &c, const void *data, size_t len) {
  if (s.zstd) {
    s.zstd->update(data, len, [&](const uint8_t *p, size_t n) { emit(c, p, n); });
  } else {
    write_digested(s.digest.get(), data, len);
  }
}

// A big blob's digest is taken on a second thread while this one writes it:
// both read the caller's bytes from memory at the same time, and the blob
// costs the slower of the two instead of their sum: with sha256 (~1.6 GB/s
// here, against ~3-4 for the page-cache copy) writing large took 0.167 s
// instead of 0.22, mixed 0.19 instead of 0.22 (medians, one run); crc32c,
// at memory speed, is the same either way. Not with threads = 1, nor when no
// thread can be had.
void Writer::write_digested(Digester *digest, const void *data, size_t len) {
  if (!digest) {
    sink_->write(data, len);
    return;
  }
  const bool parallel = len >= kParallelDigestThreshold && opts_.threads != 1 && cores() > 1;
  if (parallel) {
    std::exception_ptr digest_error;
    std::thread worker;
    try {
      worker = std::thread([&] {
#ifdef __linux__
        (void)::pthread_setname_np(::pthread_self(), "zt-digest");
#endif
        try {
          digest->update(data, len);
        } catch (...) {
          digest_error = std::current_exception();
        }
      });
    } catch (...) {
      // No thread (or no memory for one) to be had: both in turn, below.
    }
    if (worker.joinable()) {
      try {
        sink_->write(data, len);
      } catch (...) {
        worker.join();
        throw;
      }
      worker.join();
      if (digest_error) std::rethrow_exception(digest_error);
      return;
    }
  }
  digest->update(data, len);
  sink_->write(data, len);
}

void Writer::blob_append(const void *data, size_t len) {
  if (v2_) return v2_->blob_append(data, len);
  check_open();
  if (!stream_) fail(ZT_E_MISUSE, "no blob is being streamed (call zt_write_blob_begin first)");
  if (!data && len) fail(ZT_E_INVALID_ARG, "data is NULL but length is " + std::to_string(len));
  try {
    Stream &s = *stream_;
    Component &c = manifest_.objects[s.object].components[s.component];
    s.raw_bytes += len;
    auto store = [&](const void *p, size_t n) { store_streamed(s, c, p, n); };
    if (s.to_le)
      s.to_le->feed(data, len, store);
    else
      store(data, len);
  } catch (...) {
    state_ = State::Failed;
    throw;
  }
}

void Writer::blob_end() {
  if (v2_) return v2_->blob_end();
  check_open();
  if (!stream_) fail(ZT_E_MISUSE, "no blob is being streamed");
  try {
    Stream &s = *stream_;
    Object &o = manifest_.objects[s.object];
    Component &c = o.components[s.component];
    if (s.to_le) s.to_le->flush([&](const uint8_t *p, size_t n) { store_streamed(s, c, p, n); });
    if (s.zstd) s.zstd->finish([&](const uint8_t *p, size_t n) { emit(c, p, n); });
    if (c.encoding == ZT_ENCODING_ZSTD) {
      c.has_uncompressed_length = true;
      c.uncompressed_length = s.raw_bytes;
    } else {
      c.length = s.raw_bytes;
    }
    c.decoded_length = s.raw_bytes;
    if (s.digest) c.digest = s.digest->finish_string();
    stream_.reset();
    // The same rules a reader applies (docs/reading-rules.md), so we never write a file
    // we would refuse: size against the shape, element multiples, limits.
    DecodeLimits limits;
    limits.max_decoded_size = UINT64_MAX;
    manifest_.data_end = sink_->position();
    validate_component(c, o, manifest_, limits);
    if (c.status != ZT_OK) fail(c.status, c.error);
  } catch (...) {
    stream_.reset();
    state_ = State::Failed;
    throw;
  }
}

void Writer::finish() {
  if (v2_) {
    v2_->finish();
    state_ = State::Finished;
    return;
  }
  check_open();
  try {
    if (stream_) fail(ZT_E_MISUSE, "a blob is still being streamed (end it before finishing)");
    if (opts_.validate) {
      for (const auto &o : manifest_.objects) {
        if (o.format == "dense") {
          bool has_data = false;
          for (const auto &c : o.components) has_data |= c.role == "data";
          if (!has_data) fail(ZT_E_COMPONENT_MISSING, where(o.name) + ": dense object has no 'data' component");
        } else if (is_sparse_format(o.format)) {
          // The components spec 1.2 §3 lists for the format (their contents
          // were checked by zt_writer_add_csr / zt_writer_add_coo, or by the
          // reader of a copied object).
          const bool csr = o.format == "sparse_csr";
          for (const char *role : {"values", csr ? "indices" : "coords", csr ? "indptr" : "values"}) {
            bool found = false;
            for (const auto &c : o.components) found |= c.role == role;
            if (!found)
              fail(ZT_E_COMPONENT_MISSING, where(o.name) + ": " + o.format + " object has no '" + role + "' component");
          }
        }
      }
    }
    std::string man = encode_manifest(manifest_);
    sink_->write(man.data(), man.size());
    uint8_t tail[16];
    put_le64(tail, man.size());
    std::memcpy(tail + 8, kMagicV1, 8);
    sink_->write(tail, 16);
    if (opts_.verify_before_replace) check_written(*sink_);
    sink_->commit(opts_.sync);
    state_ = State::Finished;
  } catch (...) {
    state_ = State::Failed;
    sink_->abandon();
    throw;
  }
}

// The bytes just written, opened as any reader would (strict: every
// object's manifest entry) and every blob's digest and zstd frame checked,
// before they replace anything. Our own bugs, a disk that returns
// other bytes than it took, or a source whose damage slipped through must
// not cost the user the file being replaced.
void Writer::check_written(Sink &sink) {
  Sink::Written w;
  if (!sink.written_for_check(w)) return;  // a callback's bytes are gone
  const bool file = w.fd >= 0;
  const std::string what = !file            ? std::string("the file built in memory")
                           : w.path.empty() ? w.label
                                            : "'" + w.path + "'";
  try {
    ReaderOptions ro;
    ro.strict = true;
    ro.access = ZT_ACCESS_PREAD;  // read back through the file system, not our own buffers
    std::shared_ptr<Reader> r;
    if (!file) {
      r = Reader::open_memory(w.data, w.size, ro);
    } else {
      // A descriptor of its own: the temporary may have no name to open.
      const int fd = platform::duplicate_file(w.fd);
      if (fd < 0) fail(ZT_E_IO, "cannot read back " + what + ": " + std::strerror(errno));
      r = Reader::open_source(open_pread_source(fd, w.path.empty() ? w.label : w.path), ro);
    }
    // Digests and frames, not composite structure: the writer checked each
    // composite when it was added, and validating a big sparse object again
    // would hold its indices whole (8 bytes per entry).
    const std::vector<VerifyFailure> failures = r->verify_all(false);
    if (!failures.empty()) {
      const VerifyFailure &f = failures.front();
      fail(f.status, f.message);
    }
  } catch (const Error &e) {
    fail(e.status(), "the new file fails its own check before replacing the destination (" + what +
                         "; the destination is untouched): " + e.what());
  }
}

void Writer::discard() noexcept {
  if (v2_) v2_->discard();
  if (sink_) sink_->abandon();
  if (state_ == State::Open) state_ = State::Failed;
}

}  // namespace zt
