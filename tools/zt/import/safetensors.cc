// safetensors: an 8-byte little-endian header size N, N bytes of JSON
// ({name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}),
// then the byte buffer the offsets index into (offsets relative to its start).
#include <cstring>
#include <set>

#include "import.h"

namespace ztimport {
namespace {

using json = nlohmann::json;  // sorted keys: see Imported::attributes

struct StDtype {
  const char *name;
  zt_dtype dtype;
  const char *logical;  // "" = none
  uint32_t ratio;       // storage elements per element
};

// Every safetensors dtype with a zTensor storage type. Sub-byte types (F4,
// F6_*) have none and are refused by name.
constexpr StDtype kDtypes[] = {
    {"F64", ZT_F64, "", 1},           {"F32", ZT_F32, "", 1},
    {"F16", ZT_F16, "", 1},           {"BF16", ZT_BF16, "", 1},
    {"I64", ZT_I64, "", 1},           {"I32", ZT_I32, "", 1},
    {"I16", ZT_I16, "", 1},           {"I8", ZT_I8, "", 1},
    {"U64", ZT_U64, "", 1},           {"U32", ZT_U32, "", 1},
    {"U16", ZT_U16, "", 1},           {"U8", ZT_U8, "", 1},
    {"BOOL", ZT_BOOL, "", 1},         {"F8_E4M3", ZT_U8, "f8_e4m3fn", 1},
    {"F8_E5M2", ZT_U8, "f8_e5m2", 1}, {"F8_E8M0", ZT_U8, "f8_e8m0fnu", 1},
    {"C64", ZT_F32, "complex64", 2},
};

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Imported read_safetensors(const uint8_t *data, size_t size, const std::string &what, const Limits &limits) {
  if (size < 8) throw InputError(what + ": truncated safetensors file (" + std::to_string(size) + " bytes, need 8)");
  const uint64_t n = le64(data);
  if (n > limits.max_header)
    throw InputError(what + ": header length " + std::to_string(n) + " exceeds the limit of " +
                     std::to_string(limits.max_header) + " bytes");
  if (n > size - 8)
    throw InputError(what + ": header length " + std::to_string(n) + " runs past the end of the file (" +
                     std::to_string(size) + " bytes)");
  const char *text = reinterpret_cast<const char *>(data + 8);
  check_json_depth(text, n, what);
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json &parsed) {
    if (ev == json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header = json::parse(text, text + n, cb, /*allow_exceptions=*/false);
  if (header.is_discarded()) throw InputError(what + ": the header is not valid JSON");
  if (!header.is_object()) throw InputError(what + ": the header is not a JSON object");
  if (!duplicate.empty()) throw InputError(what + ": tensor '" + duplicate + "' appears twice in the header");

  const uint8_t *base = data + 8 + n;
  const uint64_t data_size = size - 8 - n;
  Imported r;
  std::vector<DataRange> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const json &e = it.value();
    if (name == "__metadata__") {
      if (!e.is_object()) throw InputError(what + ": __metadata__ is not a JSON object");
      // Kept as CBOR (strings stay strings, whatever they look like).
      for (auto m = e.begin(); m != e.end(); ++m) {
        const std::vector<uint8_t> item = json::to_cbor(m.value());
        r.attributes[m.key()] = CborItem(item.begin(), item.end());
      }
      continue;
    }
    const std::string ctx = what + ": tensor '" + name + "'";
    if (!e.is_object()) throw InputError(ctx + ": entry is not a JSON object");
    if (!e.contains("dtype") || !e["dtype"].is_string()) throw InputError(ctx + ": dtype missing or not a string");
    if (!e.contains("shape") || !e["shape"].is_array()) throw InputError(ctx + ": shape missing or not an array");
    if (!e.contains("data_offsets") || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2 ||
        !e["data_offsets"][0].is_number_unsigned() || !e["data_offsets"][1].is_number_unsigned())
      throw InputError(ctx + ": data_offsets must be two non-negative integers");
    const std::string dt = e["dtype"].get<std::string>();
    const StDtype *d = nullptr;
    for (const auto &k : kDtypes)
      if (dt == k.name) d = &k;
    if (!d) throw InputError(ctx + ": dtype '" + dt + "' has no zTensor storage type");
    Tensor t;
    t.name = name;
    t.dtype = d->dtype;
    t.logical_type = d->logical;
    uint64_t numel = 1;
    for (const auto &dim : e["shape"]) {
      if (!dim.is_number_unsigned()) throw InputError(ctx + ": shape entries must be non-negative integers");
      t.shape.push_back(dim.get<uint64_t>());
      numel = checked_mul(numel, t.shape.back(), ctx + ": shape");
    }
    const uint64_t esize = zt_dtype_size(d->dtype) * d->ratio;
    t.nbytes = checked_mul(numel, esize, ctx + ": shape × element size");
    const uint64_t begin = e["data_offsets"][0].get<uint64_t>(), end = e["data_offsets"][1].get<uint64_t>();
    if (begin > end || end > data_size)
      throw InputError(ctx + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                       ") lie outside the " + std::to_string(data_size) + "-byte data section");
    if (end - begin != t.nbytes)
      throw InputError(ctx + ": data_offsets span " + std::to_string(end - begin) + " bytes but shape × " + dt +
                       " needs " + std::to_string(t.nbytes));
    const uint8_t *p = base + begin;
    t.offset = 8 + n + begin;
    const uint64_t len = t.nbytes;
    t.emit = [p, len](const PieceFn &fn) { emit_bytes(p, len, 1, fn); };
    ranges.push_back({begin, end, name});
    r.tensors.push_back(std::move(t));
  }
  refuse_overlapping(std::move(ranges), what);
  return r;
}

}  // namespace ztimport
