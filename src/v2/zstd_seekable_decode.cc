#include "v2/zstd_seekable_decode.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "util/error.h"
#include "v2/rule.h"

namespace zt::v2 {
namespace {

constexpr uint32_t kSkippableMagic = 0x184D2A5E;
constexpr uint32_t kSeekableMagic = 0x8F92EAB1;
constexpr uint32_t kZstdMagic = 0xFD2FB528;
constexpr uint64_t kFooter = 9;  // number of frames, descriptor, magic
constexpr uint64_t kHeader = 8;  // skippable magic, frame size

uint32_t le32(const uint8_t *p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

ZstdSeekableDecoder::ZstdSeekableDecoder(ReadAt read, uint64_t stored_length, uint64_t decoded_length, std::string ctx)
    : read_(std::move(read)), decoded_length_(decoded_length), ctx_(std::move(ctx)) {
  auto bad = [&](const std::string &m) { reject(Rule::Encoding, ctx_ + ": zt.zstd-seekable/1 " + m); };
  if (stored_length < kHeader + kFooter) bad("stream of " + std::to_string(stored_length) + " bytes has no seek table");
  uint8_t foot[kFooter];
  read_(stored_length - kFooter, kFooter, foot);
  if (le32(foot + 5) != kSeekableMagic) bad("stream does not end with the seek table magic 0x8F92EAB1");
  const uint8_t desc = foot[4];
  if (desc & 0x7c) bad("seek table descriptor has reserved bits set");
  const uint64_t entry = (desc & 0x80) ? 12 : 8;
  const uint64_t n = le32(foot);
  // n < 2^32 and entry ≤ 12: no overflow. The table must fit in the stream
  // before a byte of it is read, so a huge count costs nothing.
  const uint64_t table = kHeader + n * entry + kFooter;
  if (table > stored_length)
    bad("seek table of " + std::to_string(n) + " frames (" + std::to_string(table) + " bytes) is larger than the " +
        std::to_string(stored_length) + "-byte stream");
  std::vector<uint8_t> t(table);
  read_(stored_length - table, table, t.data());
  if (le32(t.data()) != kSkippableMagic) bad("seek table does not start with the skippable frame magic 0x184D2A5E");
  if (le32(t.data() + 4) != table - kHeader)
    bad("seek table frame size " + std::to_string(le32(t.data() + 4)) + " is not the " +
        std::to_string(table - kHeader) + " its " + std::to_string(n) + " entries give");
  offsets_.reserve(n + 1);
  offsets_.push_back(0);
  uint64_t comp = 0, total = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const uint8_t *e = t.data() + kHeader + k * entry;
    const uint64_t c = le32(e), d = le32(e + 4);
    const std::string fk = "frame " + std::to_string(k) + " of " + std::to_string(n);
    if (c == 0) bad(fk + " has no compressed bytes");
    if (d == 0) bad(fk + " decodes to no bytes");
    if (d > kMaxFrameContent) bad(fk + " decodes to " + std::to_string(d) + " bytes, above the 16 MiB limit");
    if (k == 0) frame_content_ = d;
    if (k + 1 < n && d != frame_content_)
      bad(fk + " decodes to " + std::to_string(d) + " bytes, not the " + std::to_string(frame_content_) +
          " of frame 0 (all frames but the last are of one size)");
    if (k + 1 == n && d > frame_content_)
      bad("last frame decodes to " + std::to_string(d) + " bytes, more than the " + std::to_string(frame_content_) +
          " of the others");
    comp += c;  // ≤ 2^32 · 2^32: no overflow
    total += d;
    offsets_.push_back(comp);
    last_content_ = d;
  }
  if (comp != stored_length - table)
    bad("seek table frames cover " + std::to_string(comp) + " bytes, but " + std::to_string(stored_length - table) +
        " precede the table");
  if (total != decoded_length)
    bad("stream decodes to " + std::to_string(total) + " bytes, not the part's decoded_length " +
        std::to_string(decoded_length));
}

ZstdSeekableDecoder::~ZstdSeekableDecoder() {
  ZSTD_freeDCtx(dctx_);
}

void ZstdSeekableDecoder::decode_frame(size_t k, uint8_t *dst, size_t n) {
  auto bad = [&](const std::string &m) {
    reject(Rule::Encoding, ctx_ + ": zt.zstd-seekable/1 frame " + std::to_string(k) + " " + m);
  };
  if (!dctx_) {
    dctx_ = ZSTD_createDCtx();
    if (!dctx_) fail(ZT_E_NOMEM, ctx_ + ": cannot create a zstd context");
  }
  const uint64_t c = offsets_[k + 1] - offsets_[k];
  in_.resize(c);
  read_(offsets_[k], c, in_.data());
  // RFC 8878 §3.1.1: the magic, then the frame header descriptor, whose
  // bit 2 is Content_Checksum_flag.
  if (c < 5 || le32(in_.data()) != kZstdMagic) bad("is not a zstd frame");
  if (!(in_[4] & 0x04)) bad("carries no content checksum");
  const unsigned long long fcs = ZSTD_getFrameContentSize(in_.data(), c);
  if (fcs == ZSTD_CONTENTSIZE_ERROR) bad("has a damaged frame header");
  if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != n)
    bad("header says " + std::to_string(fcs) + " decoded bytes, the seek table " + std::to_string(n));
  if (ZSTD_findFrameCompressedSize(in_.data(), c) != c)
    bad("is not exactly one zstd frame of the " + std::to_string(c) + " bytes the seek table gives");
  const size_t r = ZSTD_decompressDCtx(dctx_, dst, n, in_.data(), c);
  if (ZSTD_isError(r)) bad(std::string("does not decode: ") + ZSTD_getErrorName(r));
  if (r != n) bad("decodes to " + std::to_string(r) + " bytes, not " + std::to_string(n));
  ++frames_decoded_;
}

void ZstdSeekableDecoder::read(uint64_t offset, size_t len, uint8_t *dst) {
  if (offset > decoded_length_ || len > decoded_length_ - offset)
    fail(ZT_E_INVALID_ARG, ctx_ + ": range [" + std::to_string(offset) + ", +" + std::to_string(len) +
                               ") is past the decoded length " + std::to_string(decoded_length_));
  while (len > 0) {
    const size_t k = static_cast<size_t>(offset / frame_content_);
    const uint64_t in_frame = offset - k * frame_content_;
    const size_t fsize = frame_size(k);
    const size_t take = static_cast<size_t>(std::min<uint64_t>(len, fsize - in_frame));
    if (in_frame == 0 && take == fsize) {
      decode_frame(k, dst, fsize);  // a whole frame: straight into place
    } else {
      std::memcpy(dst, cached_frame(k) + in_frame, take);
    }
    dst += take;
    offset += take;
    len -= take;
  }
}

const uint8_t *ZstdSeekableDecoder::cached_frame(size_t k) {
  if (cached_ != k) {
    cached_ = SIZE_MAX;
    out_.resize(frame_size(k));
    decode_frame(k, out_.data(), out_.size());
    cached_ = k;
  }
  return out_.data();
}

void ZstdSeekableDecoder::each(const std::function<void(const uint8_t *, size_t)> &fn) {
  for (size_t k = 0; k < frames(); ++k) fn(cached_frame(k), frame_size(k));
}

}  // namespace zt::v2
