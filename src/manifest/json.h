// CBOR ⇄ JSON for attributes and for `zt info --json`. Values JSON cannot
// hold use the conventions of interop/README.md: {"$bytes": hex},
// {"$float": "nan"|"inf"|"-inf"}, {"$tag": n, "$value": v},
// {"$map": [[k, v], ...]} (maps with a non-text key or a key starting with
// '$', which a plain object would let pass for one of these conventions),
// {"$bigint": "..."}, {"$undefined": true}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zt {

// One encoded CBOR item → JSON text.
std::string cbor_to_json(const uint8_t *data, size_t size);
inline std::string cbor_to_json(const std::string &s) {
  return cbor_to_json(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

// JSON text → one encoded CBOR item. Integers use the shortest encoding,
// floats the narrowest of half/single/double that holds them exactly
// (as the reference writer does). Throws ZT_E_INVALID_ARG on bad JSON.
std::string json_to_cbor(std::string_view json);

// Appends `s` to out as a JSON string literal.
void json_escape(std::string &out, std::string_view s);

// Checks that bytes are exactly one well-formed CBOR item.
void check_cbor_item(const uint8_t *data, size_t size, const char *what);

}  // namespace zt
