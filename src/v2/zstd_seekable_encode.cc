#include "v2/zstd_seekable_encode.h"

#include <cstring>

#include "util/error.h"

namespace zt::v2 {
namespace {

constexpr uint32_t kSkippableMagic = 0x184D2A5E;
constexpr uint32_t kSeekableMagic = 0x8F92EAB1;

void put_le32(std::vector<uint8_t> &v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}

}  // namespace

ZstdSeekableEncoder::ZstdSeekableEncoder(int level) : cctx_(ZSTD_createCCtx()) {
  if (!cctx_) fail(ZT_E_NOMEM, "zt.zstd-seekable/1: cannot create a zstd context");
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 1);
  in_.reserve(kFrameContent);
  out_.resize(ZSTD_compressBound(kFrameContent));
}

ZstdSeekableEncoder::~ZstdSeekableEncoder() {
  ZSTD_freeCCtx(cctx_);
}

void ZstdSeekableEncoder::frame(const uint8_t *p, size_t n, const Emit &emit) {
  const size_t r = ZSTD_compress2(cctx_, out_.data(), out_.size(), p, n);
  if (ZSTD_isError(r))
    fail(ZT_E_IO, std::string("zt.zstd-seekable/1: zstd compression failed: ") + ZSTD_getErrorName(r));
  entries_.emplace_back(static_cast<uint32_t>(r), static_cast<uint32_t>(n));
  emit(out_.data(), r);
}

void ZstdSeekableEncoder::update(const void *data, size_t len, const Emit &emit) {
  auto p = static_cast<const uint8_t *>(data);
  // Whole frames straight from the caller's memory when nothing is pending.
  while (in_.empty() && len >= kFrameContent) {
    frame(p, kFrameContent, emit);
    p += kFrameContent;
    len -= kFrameContent;
  }
  while (len) {
    const size_t n = std::min(len, kFrameContent - in_.size());
    in_.insert(in_.end(), p, p + n);
    p += n;
    len -= n;
    if (in_.size() == kFrameContent) {
      frame(in_.data(), in_.size(), emit);
      in_.clear();
    }
  }
}

void ZstdSeekableEncoder::finish(const Emit &emit) {
  if (!in_.empty()) {
    frame(in_.data(), in_.size(), emit);
    in_.clear();
  }
  std::vector<uint8_t> t;
  put_le32(t, kSkippableMagic);
  put_le32(t, static_cast<uint32_t>(entries_.size() * 8 + 9));
  for (const auto &[c, d] : entries_) {
    put_le32(t, c);
    put_le32(t, d);
  }
  put_le32(t, static_cast<uint32_t>(entries_.size()));
  t.push_back(0);  // descriptor: no per-frame checksum column
  put_le32(t, kSeekableMagic);
  emit(t.data(), t.size());
}

}  // namespace zt::v2
