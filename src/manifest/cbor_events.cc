#include "manifest/cbor_events.h"

#include <string>

namespace zt::cbor::detail {
namespace {

Builder *B(void *ctx) {
  return static_cast<Builder *>(ctx);
}

void cb_u8(void *c, uint8_t v) {
  B(c)->leaf(Kind::Uint, v);
}
void cb_u16(void *c, uint16_t v) {
  B(c)->leaf(Kind::Uint, v);
}
void cb_u32(void *c, uint32_t v) {
  B(c)->leaf(Kind::Uint, v);
}
// libcbor 0.8 passes string lengths and item counts as size_t, 0.10 as
// uint64_t: the same type on 64-bit hosts, not on 32-bit ones (i686, armhf,
// win32). The callbacks take whatever this libcbor's callback types say.
// On a 32-bit host libcbor 0.8 cuts a length or count past 4 Gi to 32 bits
// before the callback sees it (a string claiming 2^40 bytes would pass as
// an empty one): the callbacks then take the head's own 64-bit argument,
// and a cut string length is an error (no buffer this parser takes is that
// long).
template <typename F>
struct StringLengthOf;
template <typename L>
struct StringLengthOf<void (*)(void *, cbor_data, L)> {
  using type = L;
};
template <typename F>
struct CollectionLengthOf;
template <typename L>
struct CollectionLengthOf<void (*)(void *, L)> {
  using type = L;
};
using StringLength = StringLengthOf<cbor_string_callback>::type;
using CollectionLength = CollectionLengthOf<cbor_collection_callback>::type;

template <typename L>
uint64_t full_length(const Builder *b, L cut) {
  if constexpr (sizeof(L) < sizeof(uint64_t)) {
    return b->head_argument();
  } else {
    return cut;
  }
}

// libcbor 0.10 takes the length as uint64_t but checks it against the
// buffer as a size_t: on a 32-bit host a string claiming 2^40 bytes passes
// its check (as 0) and reaches the callback whole (seen with the win32
// build's libcbor 0.10.2). So the string is checked against the buffer here
// too, whatever libcbor did.
void cut_string_check(Builder *b, cbor_data d, StringLength n) {
  const uint64_t full = full_length(b, n);
  if (full != n || full > static_cast<uint64_t>(b->data_end - d))
    b->set_error(ZT_E_CBOR, "string claims " + std::to_string(full) + " bytes, past the end of the buffer");
}

void cb_u64(void *c, uint64_t v) {
  B(c)->leaf(Kind::Uint, v);
}
void cb_n8(void *c, uint8_t v) {
  B(c)->leaf(Kind::Negint, v);
}
void cb_n16(void *c, uint16_t v) {
  B(c)->leaf(Kind::Negint, v);
}
void cb_n32(void *c, uint32_t v) {
  B(c)->leaf(Kind::Negint, v);
}
void cb_n64(void *c, uint64_t v) {
  B(c)->leaf(Kind::Negint, v);
}
void cb_bytes(void *c, cbor_data d, StringLength n) {
  cut_string_check(B(c), d, n);
  B(c)->string(Kind::Bytes, d, n);
}
void cb_bytes_start(void *c) {
  B(c)->open_string(Kind::Bytes);
}
void cb_text(void *c, cbor_data d, StringLength n) {
  cut_string_check(B(c), d, n);
  B(c)->string(Kind::Text, d, n);
}
void cb_text_start(void *c) {
  B(c)->open_string(Kind::Text);
}
void cb_array(void *c, CollectionLength n) {
  B(c)->open(Kind::Array, full_length(B(c), n), false);
}
void cb_array_indef(void *c) {
  B(c)->open(Kind::Array, 0, true);
}
void cb_map(void *c, CollectionLength n) {
  B(c)->open(Kind::Map, full_length(B(c), n), false);
}
void cb_map_indef(void *c) {
  B(c)->open(Kind::Map, 0, true);
}
void cb_tag(void *c, uint64_t t) {
  Builder *b = B(c);
  b->open(Kind::Tag, 1, false);
  if (!b->error) b->nodes->back().value = t;
}
void cb_f2(void *c, float f) {
  B(c)->real(f);
}
void cb_f4(void *c, float f) {
  B(c)->real(f);
}
void cb_f8(void *c, double d) {
  B(c)->real(d);
}
void cb_undef(void *c) {
  B(c)->leaf(Kind::Undefined, 0);
}
void cb_null(void *c) {
  B(c)->leaf(Kind::Null, 0);
}
void cb_bool(void *c, bool v) {
  B(c)->leaf(Kind::Bool, v ? 1 : 0);
}
void cb_break(void *c) {
  B(c)->event = Builder::Event::Break;
}

}  // namespace

const cbor_callbacks kBuilderCallbacks = [] {
  cbor_callbacks cb = cbor_empty_callbacks;
  cb.uint8 = cb_u8;
  cb.uint16 = cb_u16;
  cb.uint32 = cb_u32;
  cb.uint64 = cb_u64;
  cb.negint8 = cb_n8;
  cb.negint16 = cb_n16;
  cb.negint32 = cb_n32;
  cb.negint64 = cb_n64;
  cb.byte_string = cb_bytes;
  cb.byte_string_start = cb_bytes_start;
  cb.string = cb_text;
  cb.string_start = cb_text_start;
  cb.array_start = cb_array;
  cb.indef_array_start = cb_array_indef;
  cb.map_start = cb_map;
  cb.indef_map_start = cb_map_indef;
  cb.tag = cb_tag;
  cb.float2 = cb_f2;
  cb.float4 = cb_f4;
  cb.float8 = cb_f8;
  cb.undefined = cb_undef;
  cb.null = cb_null;
  cb.boolean = cb_bool;
  cb.indef_break = cb_break;
  return cb;
}();

}  // namespace zt::cbor::detail
