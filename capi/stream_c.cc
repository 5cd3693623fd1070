// Component streams: a whole component read in caller-sized pieces, with
// bounded memory (zt_component_stream_*).
#include "component_stream.h"
#include "handles.h"

using namespace zt;
using namespace zt::capi;

namespace {

constexpr uint32_t kStreamTag = 0x5a545331;  // "ZTS1"

}  // namespace

struct zt_component_stream {
  uint32_t tag = kStreamTag;
  std::unique_ptr<zt::ComponentStream> stream;
};

namespace {

zt_component_stream &stream_ref(zt_component_stream *s, const char *fn) {
  if (!s) fail(ZT_E_INVALID_ARG, std::string(fn) + ": stream is NULL");
  if (!is_live(s) || s->tag != kStreamTag)
    fail(ZT_E_MISUSE, std::string(fn) + ": stream is closed or not a zt_component_stream");
  return *s;
}

}  // namespace

extern "C" {

ZT_API zt_status zt_component_stream_open(const zt_object *obj, size_t index, zt_component_stream **out) {
  return guard([&] {
    if (!out) invalid("zt_component_stream_open: out is NULL");
    *out = nullptr;
    const zt_object &o = object_ref(obj, "zt_component_stream_open");
    const Component &c = component_ref(o, index, "zt_component_stream_open");
    auto s = std::make_unique<zt_component_stream>();
    // The stream shares the reader: it stays usable after zt_close.
    s->stream = std::make_unique<ComponentStream>(*o.reader, o.file->reader, *o.obj, c);
    register_handle(s.get());
    *out = s.release();
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_stream_read(zt_component_stream *stream, void *dst, size_t capacity, size_t *out_len) {
  return guard([&] {
    if (out_len) *out_len = 0;
    zt_component_stream &s = stream_ref(stream, "zt_component_stream_read");
    if (!out_len) invalid("zt_component_stream_read: out_len is NULL");
    *out_len = s.stream->read(dst, capacity);
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_stream_close(zt_component_stream *stream) {
  return guard([&] {
    if (!stream) return ZT_OK;
    if (!is_live(stream) || stream->tag != kStreamTag)
      fail(ZT_E_MISUSE, "zt_component_stream_close: stream is closed or not a zt_component_stream");
    unregister_handle(stream);
    stream->tag = 0;
    delete stream;
    return ZT_OK;
  });
}

}  // extern "C"
