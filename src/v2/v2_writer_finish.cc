// The v2 writer's last step (v2_writer.h): final blob offsets, the blobs
// moved into canonical order when they came out of it, the manifest and
// the footer, and the file committed.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "platform/file.h"
#include "util/error.h"
#include "v2/footer.h"
#include "v2/v2_writer.h"
#include "v2/write_checks.h"

namespace zt::v2 {
namespace {

constexpr size_t kCopyChunk = size_t{1} << 20;

void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

// Final offsets: the layout file's own while everything came in canonical
// order (or the file is not canonical), else packed afresh in that order.
void Writer::place_blobs(uint64_t &manifest_at) {
  if (in_order_ || !opts_.canonical) {
    for (Blob &b : blobs_) b.offset = b.at;
    manifest_at = next_at_;
    return;
  }
  std::vector<const Object *> objs;
  objs.reserve(objects_.size());
  for (const Object &o : objects_) objs.push_back(&o);
  std::sort(objs.begin(), objs.end(), [](const Object *a, const Object *b) { return a->name < b->name; });
  uint64_t cur = kCanonicalAlignment;
  for (const Object *o : objs) {
    std::vector<const Part *> parts;
    for (const Part &p : o->parts) parts.push_back(&p);
    std::sort(parts.begin(), parts.end(), [](const Part *a, const Part *b) { return a->name < b->name; });
    for (const Part *p : parts) {
      Blob &b = blobs_[p->blob];
      if (b.placed) continue;
      b.placed = true;
      b.offset = cur;
      cur = next_offset(cur, b.length);
    }
  }
  manifest_at = cur;
}

void Writer::copy_out(int out_fd, uint64_t manifest_at, const std::string &manifest) {
  file_.flush();  // copy_file_range reads the file itself
  pwrite_exact(out_fd, kMagic, 8, 0, "the magic");
  std::vector<uint8_t> buf;
  for (const Blob &b : blobs_) {
    // In the kernel where it can (copy_file_range), by hand below for the rest.
    uint64_t done = platform::copy_in_kernel(file_.fd(), b.at, out_fd, b.offset, b.length);
    if (done < b.length && buf.empty()) buf.resize(kCopyChunk);
    while (done < b.length) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(b.length - done, buf.size()));
      file_.read(b.at + done, buf.data(), n);
      pwrite_exact(out_fd, buf.data(), n, b.offset + done, "a blob");
      done += n;
    }
  }
  (void)manifest_at;
  (void)manifest;
}

void Writer::stream_out(Sink &sink, uint64_t manifest_at, const std::string &manifest, uint64_t file_size) {
  (void)file_size;
  sink.write(kMagic, 8);
  std::vector<const Blob *> order;
  for (const Blob &b : blobs_) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const Blob *a, const Blob *b) { return a->offset < b->offset; });
  std::vector<uint8_t> buf(kCopyChunk);
  for (const Blob *b : order) {
    if (b->length == 0) continue;  // it may share its offset with the next blob
    sink.write_zeros(static_cast<size_t>(b->offset - sink.position()));
    for (uint64_t done = 0; done < b->length;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(b->length - done, buf.size()));
      file_.read(b->at + done, buf.data(), n);
      sink.write(buf.data(), n);
      done += n;
    }
  }
  sink.write_zeros(static_cast<size_t>(manifest_at - sink.position()));
  sink.write(manifest.data(), manifest.size());
}

void Writer::finish() {
  check_open();
  try {
    if (stream_) fail(ZT_E_MISUSE, "a blob is still being streamed (end it before finishing)");
    for (Object &o : objects_) {
      if (o.parts.empty())
        fail(ZT_E_COMPONENT_MISSING, where(o.name) + ": an object has at least one part (v2 spec §3.3)");
      if (o.layout == "quantized_group") restate_quantized(o);
      if (o.layout != "dense") {  // dense sizes were checked part by part
        std::vector<PartFacts> facts;
        for (const Part &p : o.parts) facts.push_back({p.name, p.dtype, p.type, p.decoded_length});
        check_layout_before_write(o.name, o.layout, o.shape, o.numel, o.attributes, facts);
      }
    }
    uint64_t manifest_at = 0;
    place_blobs(manifest_at);
    const std::string manifest = encode_manifest();
    if (manifest.size() > kMaxManifestSize) fail(ZT_E_LIMIT, "the v2 manifest is over 1 GiB (v2 spec §3.1)");
    uint8_t footer[kFooterSize] = {};
    put_le(footer, manifest_at, 8);
    put_le(footer + 8, manifest.size(), 8);
    put_le(footer + 16, XXH3_64bits(manifest.data(), manifest.size()), 8);
    put_le(footer + 24, 2, 4);
    std::memcpy(footer + 32, kMagic, 8);
    auto *file = dynamic_cast<FileSink *>(sink_.get());
    const bool reordered = !(in_order_ || !opts_.canonical);
    if (file && !reordered) {
      file_.write(manifest_at, manifest.data(), manifest.size(), "the manifest");
      file_.write(manifest_at + manifest.size(), footer, kFooterSize, "the footer");
      file_.set_size(manifest_at + manifest.size() + kFooterSize);
      if (opts_.before_commit) opts_.before_commit(*sink_);
      sink_->commit(opts_.sync);
    } else if (file) {
      // The layout file was a spool: the blobs go in canonical order into a
      // new temporary for the same destination, and the spool is dropped.
      auto final_sink = std::make_unique<FileSink>(file->path());
      const int out = final_sink->positional_fd();
      copy_out(out, manifest_at, manifest);
      pwrite_exact(out, manifest.data(), manifest.size(), manifest_at, "the manifest");
      pwrite_exact(out, footer, kFooterSize, manifest_at + manifest.size(), "the footer");
      if (opts_.before_commit) opts_.before_commit(*final_sink);
      final_sink->commit(opts_.sync);
      sink_->abandon();
    } else {
      stream_out(*sink_, manifest_at, manifest, manifest_at + manifest.size() + kFooterSize);
      sink_->write(footer, kFooterSize);
      if (opts_.before_commit) opts_.before_commit(*sink_);
      sink_->commit(opts_.sync);
    }
    state_ = State::Finished;
    if (own_fd_ && fd_ >= 0) platform::close_file(fd_);
    fd_ = -1;
  } catch (...) {
    state_ = State::Failed;
    sink_->abandon();
    throw;
  }
}

}  // namespace zt::v2
