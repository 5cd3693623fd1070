// Reader::read_slice: an N-d box [start, stop) of a component, row-major
// and contiguous in the caller's buffer, like numpy's a[s0:e0, s1:e1, ...].
//
// The box is a sequence of contiguous runs of the stored (decoded) bytes:
// the trailing dimensions the box covers whole merge with the last partial
// one into one run, and the leading dimensions enumerate the runs in
// increasing offset order. Raw components read only those runs (runs a few
// bytes apart share one scattered read); zstd ones are decoded from the
// start only as far as the last run, through a bounded buffer, copying the
// runs as they pass.
#include <algorithm>
#include <cstring>

#include "codec/codec.h"
#include "reader.h"
#include "types/dtype.h"
#include "util/error.h"

namespace zt {
namespace {

// The runs of a box, in file order. `outer` dims (those before `inner`)
// are walked with an odometer; each position gives one run of `run_bytes`.
class RunWalker {
 public:
  RunWalker(const uint64_t *dims, size_t ndim, const uint64_t *start, const uint64_t *stop, uint64_t elem_size)
      : ndim_(ndim), start_(start, start + ndim), stop_(stop, stop + ndim), stride_(ndim) {
    uint64_t s = elem_size;
    for (size_t d = ndim; d-- > 0;) {
      stride_[d] = s;
      s *= dims[d];  // cannot overflow: the component's size bounds it
    }
    // inner_ = first dim of the contiguous tail: all dims after it whole.
    inner_ = ndim;
    run_bytes_ = elem_size;
    while (inner_ > 0) {
      size_t d = inner_ - 1;
      run_bytes_ = (stop[d] - start[d]) * stride_[d];
      inner_ = d;
      if (start[d] != 0 || stop[d] != dims[d]) break;
    }
    idx_.assign(start, start + inner_);
  }
  uint64_t run_bytes() const { return run_bytes_; }
  // Byte offset (in the decoded component) of the current run.
  uint64_t offset() const {
    uint64_t off = 0;
    for (size_t d = 0; d < inner_; ++d) off += idx_[d] * stride_[d];
    if (inner_ < ndim_) off += start_[inner_] * stride_[inner_];
    return off;
  }
  // Moves to the next run; false when there is none.
  bool next() {
    for (size_t d = inner_; d-- > 0;) {
      if (++idx_[d] < stop_[d]) return true;
      idx_[d] = start_[d];
    }
    return false;
  }

 private:
  size_t ndim_;
  std::vector<uint64_t> start_, stop_, stride_, idx_;
  size_t inner_ = 0;
  uint64_t run_bytes_ = 0;
};

std::string box_text(size_t ndim, const uint64_t *start, const uint64_t *stop) {
  std::string s = "[";
  for (size_t d = 0; d < ndim; ++d) {
    if (d) s += ", ";
    s += std::to_string(start[d]) + ":" + std::to_string(stop[d]);
  }
  return s + "]";
}

std::string shape_text(const uint64_t *dims, size_t ndim) {
  std::string s = "(";
  for (size_t d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
  return s + (ndim == 1 ? ",)" : ")");
}

}  // namespace

size_t Reader::read_slice(const Object &o, const Component &c, size_t ndim, const uint64_t *start, const uint64_t *stop,
                          void *dst, size_t capacity) const {
  check_readable(o, c);
  const std::string ctx = where(o.name, c.role);
  const size_t storage_size = dtype_size(c.dtype);
  if (storage_size == 0)
    fail(ZT_E_UNSUPPORTED, ctx + ": dtype '" + c.dtype_name + "' has no element size; a slice needs one");
  // A dense tensor's data is sliced along the object's shape, in logical
  // elements (a complex64 is one element of 8 bytes); any other component
  // is a 1-d array of its storage elements.
  const bool dense_data = o.format == "dense" && c.role == "data";
  // A packed sub-byte type (v2's f4_e2m1, two elements a byte) has no
  // whole-byte element to cut the shape at.
  if (dense_data && c.has_type && c.logical_type == "f4_e2m1")
    fail(ZT_E_UNSUPPORTED, ctx +
                               ": f4_e2m1 packs two elements a byte; an N-d slice needs whole-byte elements "
                               "(read the component, or a byte range of it)");
  const uint64_t total = decoded_size(o, c);
  // Any other packed type (safetensors' F6_*: four elements in three bytes)
  // is seen by its size: fewer bytes than the shape's elements, none cut at
  // a byte. Cutting by the shape would read past the component.
  if (dense_data) {
    const auto numel = shape_numel(o.shape);
    const auto want = numel ? checked_mul(*numel, storage_size * c.ratio) : std::nullopt;
    if (want && *want != total)
      fail(ZT_E_UNSUPPORTED, ctx + ": " +
                                 (c.has_type ? "logical type '" + printable(c.logical_type) + "'" : "its type") +
                                 " packs " + std::to_string(*numel) + " elements in " + std::to_string(total) +
                                 " bytes; an N-d slice needs whole-byte elements (read the component, or a byte "
                                 "range of it)");
  }
  uint64_t flat_dim = 0;
  const uint64_t *dims = nullptr;
  size_t rank = 0;
  uint64_t es = storage_size;
  if (dense_data) {
    dims = o.shape.data();
    rank = o.shape.size();
    es = storage_size * c.ratio;
  } else {
    flat_dim = total / storage_size;
    dims = &flat_dim;
    rank = 1;
  }
  if (ndim != rank)
    fail(ZT_E_INVALID_ARG, ctx + ": the slice has " + std::to_string(ndim) + " dimensions, the component has " +
                               std::to_string(rank) + " (shape " + shape_text(dims, rank) + ")");
  if (rank && (!start || !stop)) fail(ZT_E_INVALID_ARG, ctx + ": start or stop is NULL");
  uint64_t bytes = es;
  for (size_t d = 0; d < rank; ++d) {
    if (start[d] > stop[d] || stop[d] > dims[d])
      fail(ZT_E_INVALID_ARG, ctx + ": slice " + box_text(rank, start, stop) + " does not fit shape " +
                                 shape_text(dims, rank) + " (dimension " + std::to_string(d) +
                                 (start[d] > stop[d] ? ": start > stop)" : ": stop past the end)"));
    bytes *= stop[d] - start[d];  // bounded by the component's size
  }
  if (capacity < bytes)
    fail(ZT_E_BUFFER_TOO_SMALL,
         ctx + ": slice needs " + std::to_string(bytes) + " bytes, buffer has " + std::to_string(capacity));
  if (bytes == 0) return 0;
  if (!dst) fail(ZT_E_INVALID_ARG, ctx + ": dst is NULL");
  verify_before_read(o, c);  // the whole component, once: the price of a checked slice
  auto *out = static_cast<uint8_t *>(dst);
  RunWalker runs(dims, rank, start, stop, es);
  const uint64_t run = runs.run_bytes();

  if (c.encoding == ZT_ENCODING_RAW) {
    // Runs that start within Source::kMaxGap of the previous one's end are
    // read together, the gap skipped; up to kBatch such groups go to the
    // source at once (a remote one fetches them concurrently, exactly).
    constexpr size_t kBatch = 4096;
    std::vector<Source::Piece> pieces;
    std::vector<std::pair<uint64_t, size_t>> starts;  // group offset, first piece
    uint64_t group_end = 0;
    auto flush = [&] {
      if (starts.empty()) return;
      std::vector<Source::Group> groups(starts.size());
      for (size_t g = 0; g < starts.size(); ++g) {
        const size_t end = g + 1 < starts.size() ? starts[g + 1].second : pieces.size();
        groups[g] = {c.offset + starts[g].first, pieces.data() + starts[g].second, end - starts[g].second};
      }
      source_of(c).read_groups(groups.data(), groups.size());
      pieces.clear();
      starts.clear();
    };
    size_t written = 0;
    size_t in_group = 0;
    const uint64_t max_gap = source_of(c).slice_gap();
    do {
      const uint64_t off = runs.offset();
      if (starts.empty() || off - group_end > max_gap || in_group >= 1024) {
        if (starts.size() >= kBatch) flush();
        starts.emplace_back(off, pieces.size());
        in_group = 0;
      } else if (off > group_end) {
        pieces.push_back({nullptr, static_cast<size_t>(off - group_end)});
        ++in_group;
      }
      pieces.push_back({out + written, static_cast<size_t>(run)});
      ++in_group;
      written += static_cast<size_t>(run);
      group_end = off + run;
    } while (runs.next());
    flush();
  } else if (c.seekable) {
    // Each run from the frames it touches; the decoder keeps the last
    // frame, so runs in one frame decode it once.
    auto dec = seekable_decoder(o, c);
    size_t written = 0;
    do {
      dec->read(runs.offset(), static_cast<size_t>(run), out + written);
      written += static_cast<size_t>(run);
    } while (runs.next());
  } else {
    std::vector<uint8_t> stored;
    const uint8_t *src = stored_bytes(c, stored);
    uint64_t pos = 0;  // decoded bytes seen so far
    uint64_t run_off = runs.offset(), run_done = 0;
    size_t written = 0;
    bool more = true;
    const uint64_t decoded = zstd_decode_until(src, c.length, ctx, [&](const uint8_t *p, size_t n) {
      const uint64_t piece_end = pos + n;
      while (more) {
        const uint64_t lo = run_off + run_done;
        if (lo >= piece_end) break;
        const uint64_t hi = std::min(run_off + run, piece_end);
        std::memcpy(out + written, p + (lo - pos), static_cast<size_t>(hi - lo));
        written += static_cast<size_t>(hi - lo);
        run_done = hi - run_off;
        if (run_done == run) {
          more = runs.next();
          if (more) run_off = runs.offset(), run_done = 0;
        }
      }
      pos = piece_end;
      return more;
    });
    if (more)
      fail(ZT_E_DECODED_SIZE, ctx + ": zstd data ends after " + std::to_string(decoded) +
                                  " bytes, before the end of the slice (" + std::to_string(total) + " declared)");
  }
  if (needs_swap(c) && storage_size > 1) byteswap_inplace(dst, static_cast<size_t>(bytes), storage_size);
  return static_cast<size_t>(bytes);
}

}  // namespace zt
