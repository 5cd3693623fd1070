// Attribute values of imported files, encoded straight to CBOR items.
//
// Foreign metadata reaches the writer as CBOR (zt_writer_set_attributes_cbor),
// never as JSON text: the JSON conventions for values JSON lacks ({"$bytes":
// hex}, {"$float": "nan"}, {"$map": ...}) would otherwise turn a foreign key
// or value that happens to look like one into something else, and a GGUF
// array held as nlohmann::json costs ~16 bytes plus per-element overhead per
// value where CBOR needs 1-9.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "internal/internal_api.h"

namespace zt::foreign {

// One encoded CBOR data item.
using CborItem = std::vector<uint8_t>;
// Attribute key → value, sorted by key (a std::map, so the output does not
// depend on the input's key order, and merging is O(log n) per key).
using CborAttributes = std::map<std::string, CborItem>;

void cbor_append_uint(CborItem &out, uint64_t v);
void cbor_append_int(CborItem &out, int64_t v);
void cbor_append_bool(CborItem &out, bool v);
// The float's own width and bits (NaN payloads and -0.0 kept).
void cbor_append_f32(CborItem &out, float v);
void cbor_append_f64(CborItem &out, double v);
// A text string if `s` is valid UTF-8, else a byte string with its bytes.
void cbor_append_string(CborItem &out, std::string_view s);
void cbor_append_text(CborItem &out, std::string_view s);  // s must be valid UTF-8
void cbor_append_array_head(CborItem &out, uint64_t count);

// The map {key: value, ...} as one item; keys must be valid UTF-8.
ZT_INTERNAL CborItem cbor_map(const CborAttributes &attributes);  // zt convert too

}  // namespace zt::foreign
