// safetensors: an 8-byte little-endian header size N, N bytes of JSON
// ({name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}),
// then the byte buffer the offsets index into (offsets relative to its start).
#include <algorithm>
#include <cstring>

#include "foreign.h"
#include "util/json_sax.h"

namespace zt::foreign {
namespace {

using json = nlohmann::json;

struct StDtype {
  const char *name;
  zt_dtype dtype;
  const char *logical;  // "" = none
  uint32_t bits;        // bits per element (safetensors' Dtype::bitsize)
};

// Every safetensors dtype (its Dtype enum). The sub-byte ones are stored as
// u8 bytes under a logical type naming the element: F4 as v2's f4_e2m1
// (two elements a byte), F6_E2M3 / F6_E3M2 as f6_e2m3 / f6_e3m2 (four
// elements in three bytes, MX's packing); safetensors requires a whole
// number of bytes (shape × bits divisible by 8), and so does this import.
constexpr StDtype kDtypes[] = {
    {"F64", ZT_F64, "", 64},
    {"F32", ZT_F32, "", 32},
    {"F16", ZT_F16, "", 16},
    {"BF16", ZT_BF16, "", 16},
    {"I64", ZT_I64, "", 64},
    {"I32", ZT_I32, "", 32},
    {"I16", ZT_I16, "", 16},
    {"I8", ZT_I8, "", 8},
    {"U64", ZT_U64, "", 64},
    {"U32", ZT_U32, "", 32},
    {"U16", ZT_U16, "", 16},
    {"U8", ZT_U8, "", 8},
    {"BOOL", ZT_BOOL, "", 8},
    {"F8_E4M3", ZT_U8, "f8_e4m3fn", 8},
    {"F8_E5M2", ZT_U8, "f8_e5m2", 8},
    {"F8_E8M0", ZT_U8, "f8_e8m0fnu", 8},
    {"F8_E4M3FNUZ", ZT_U8, "f8_e4m3fnuz", 8},
    {"F8_E5M2FNUZ", ZT_U8, "f8_e5m2fnuz", 8},
    {"F4", ZT_U8, "f4_e2m1", 4},
    {"F6_E2M3", ZT_U8, "f6_e2m3", 6},
    {"F6_E3M2", ZT_U8, "f6_e3m2", 6},
    {"C64", ZT_F32, "complex64", 64},
};

// One tensor entry of the header, as the SAX pass found it; checked after
// the parse (in name order) with the messages the rules name.
struct HeaderEntry {
  std::string name;
  std::string dtype;
  bool has_dtype = false;
  bool has_shape = false, bad_shape_type = false, bad_shape = false;
  std::vector<uint64_t> shape;
  bool has_offsets = false, bad_offsets = false;
  std::vector<uint64_t> offsets;
};

// The header read by a plain SAX pass: linear in its size, keeping only
// what the import needs (the tensor entries, and the __metadata__ values
// as CBOR), with every JSON object checked for repeated keys.
class HeaderSax : public zt::JsonSaxBase {
 public:
  explicit HeaderSax(const std::string &what) : what_(what) {}
  std::vector<HeaderEntry> entries;
  CborAttributes metadata;

  bool parse_error(std::size_t pos, const std::string &, const nlohmann::detail::exception &) override {
    throw format_error(what_ + ": the header is not valid JSON (at byte " + std::to_string(pos) + " of it)");
  }

 private:
  enum class Field { None, Dtype, Shape, Offsets };

  void scalar(const zt::JsonScalar &v) override {
    begin_value(v.kind);
    if (meta_) zt::replay(v, *meta_);
    if (v.kind == zt::JsonKind::Unsigned && depth() == 3 && in_entry_) {
      if (field_ == Field::Shape) entries.back().shape.push_back(v.unsigned_integer);
      if (field_ == Field::Offsets) entries.back().offsets.push_back(v.unsigned_integer);
    }
    if (v.kind == zt::JsonKind::String && depth() == 2 && in_entry_ && field_ == Field::Dtype) {
      entries.back().dtype = *v.string;
      entries.back().has_dtype = true;
    }
    end_value();
  }
  bool check_keys_of_next_object() override { return depth() != 0; }  // the root's: checked by name once sorted
  void open(zt::JsonKind kind) override {
    begin_value(kind);
    if (meta_ && kind == zt::JsonKind::Object) meta_->start_object(static_cast<std::size_t>(-1));
    if (meta_ && kind == zt::JsonKind::Array) meta_->start_array(static_cast<std::size_t>(-1));
  }
  void on_key(std::string &k) override {
    if (depth() == 1) {
      root_key_ = k;
    } else if (depth() == 2 && in_entry_) {
      field_ = k == "dtype"          ? Field::Dtype
               : k == "shape"        ? Field::Shape
               : k == "data_offsets" ? Field::Offsets
                                     : Field::None;
    } else if (depth() == 2 && in_metadata_) {
      meta_key_ = k;
    }
    if (meta_ && depth() > 2) meta_->key(k);
  }
  void close(zt::JsonKind kind) override {
    if (meta_ && kind == zt::JsonKind::Object) meta_->end_object();
    if (meta_ && kind == zt::JsonKind::Array) meta_->end_array();
    if (depth() == 1) {
      in_entry_ = in_metadata_ = false;
      field_ = Field::None;
    } else {
      end_value();
    }
  }
  [[noreturn]] void duplicate_key(const std::string &key) override {
    throw format_error(what_ + ": key '" + key + "' appears twice in one JSON object of the header");
  }

  // A value starts at the current depth: what it means depends on where.
  void begin_value(zt::JsonKind kind) {
    using zt::JsonKind;
    if (depth() == 0) {
      if (kind != JsonKind::Object) throw format_error(what_ + ": the header is not a JSON object");
    } else if (depth() == 1) {
      if (root_key_ == "__metadata__") {
        if (kind != JsonKind::Object) throw format_error(what_ + ": __metadata__ is not a JSON object");
        if (metadata_seen_) throw format_error(what_ + ": __metadata__ appears twice in the header");
        in_metadata_ = metadata_seen_ = true;
      } else {
        if (kind != JsonKind::Object)
          throw format_error(what_ + ": tensor '" + root_key_ + "': entry is not a JSON object");
        in_entry_ = true;
        entries.emplace_back();
        entries.back().name = root_key_;
      }
    } else if (depth() == 2 && in_metadata_) {
      // Each value becomes one CBOR item (strings stay strings, whatever
      // they look like); nested ones are built by nlohmann's plain DOM
      // builder, which is linear.
      meta_value_ = json();
      meta_.reset(new nlohmann::detail::json_sax_dom_parser<json>(meta_value_, true));
    } else if (depth() == 2 && in_entry_) {
      HeaderEntry &e = entries.back();
      if (field_ == Field::Dtype && kind != JsonKind::String) e.has_dtype = false;
      if (field_ == Field::Shape) {
        e.has_shape = true;
        e.shape.clear();
        e.bad_shape_type = kind != JsonKind::Array;
      }
      if (field_ == Field::Offsets) {
        e.has_offsets = true;
        e.offsets.clear();
        e.bad_offsets = kind != JsonKind::Array;
      }
    } else if (depth() == 3 && in_entry_ && kind != JsonKind::Unsigned) {
      if (field_ == Field::Shape) entries.back().bad_shape = true;
      if (field_ == Field::Offsets) entries.back().bad_offsets = true;
    }
  }
  // A value inside the innermost open container just ended.
  void end_value() {
    if (depth() == 2 && meta_) {
      const std::vector<uint8_t> item = json::to_cbor(meta_value_);
      metadata[meta_key_] = CborItem(item.begin(), item.end());
      meta_.reset();
      meta_value_ = json();
    }
  }

  const std::string &what_;
  std::string root_key_, meta_key_;
  bool in_entry_ = false, in_metadata_ = false, metadata_seen_ = false;
  Field field_ = Field::None;
  json meta_value_;
  std::unique_ptr<nlohmann::detail::json_sax_dom_parser<json>> meta_;
};

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Imported read_safetensors(const uint8_t *data, size_t size, const std::string &what, const Limits &limits) {
  if (size < 8) throw format_error(what + ": truncated safetensors file (" + std::to_string(size) + " bytes, need 8)");
  const uint64_t n = le64(data);
  if (n > limits.max_header)
    throw format_error(what + ": header length " + std::to_string(n) + " exceeds the limit of " +
                       std::to_string(limits.max_header) + " bytes");
  if (n > size - 8)
    throw format_error(what + ": header length " + std::to_string(n) + " runs past the end of the file (" +
                       std::to_string(size) + " bytes)");
  const char *text = reinterpret_cast<const char *>(data + 8);
  check_json_depth(text, n, what);
  HeaderSax sax(what);
  json::sax_parse(text, text + n, &sax);
  std::vector<HeaderEntry> &entries = sax.entries;
  // Names in sorted order (the output does not depend on the header's order)
  // and each once: the entries are sorted, so a repeat is adjacent.
  auto by_name = [](const HeaderEntry &a, const HeaderEntry &b) { return a.name < b.name; };
  if (!std::is_sorted(entries.begin(), entries.end(), by_name))  // writers often emit names sorted
    std::sort(entries.begin(), entries.end(), by_name);
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i - 1].name == entries[i].name)
      throw format_error(what + ": tensor '" + entries[i].name + "' appears twice in the header");

  const uint8_t *base = data + 8 + n;
  const uint64_t data_size = size - 8 - n;
  Imported r;
  r.attributes = std::move(sax.metadata);
  std::vector<DataRange> ranges;
  for (HeaderEntry &e : entries) {
    const std::string &name = e.name;
    const std::string ctx = what + ": tensor '" + name + "'";
    if (!e.has_dtype) throw format_error(ctx + ": dtype missing or not a string");
    if (!e.has_shape || e.bad_shape_type) throw format_error(ctx + ": shape missing or not an array");
    if (e.bad_shape) throw format_error(ctx + ": shape entries must be non-negative integers");
    if (!e.has_offsets || e.bad_offsets || e.offsets.size() != 2)
      throw format_error(ctx + ": data_offsets must be two non-negative integers");
    const std::string &dt = e.dtype;
    const StDtype *d = nullptr;
    for (const auto &k : kDtypes)
      if (dt == k.name) d = &k;
    if (!d) throw format_error(ctx + ": dtype '" + printable(dt) + "' is not a safetensors dtype");
    Tensor t;
    t.name = name;
    t.dtype = d->dtype;
    t.logical_type = d->logical;
    uint64_t numel = 1;
    for (uint64_t dim : e.shape) {
      t.shape.push_back(dim);
      numel = checked_mul(numel, dim, ctx + ": shape");
    }
    const uint64_t nbits = checked_mul(numel, d->bits, ctx + ": shape × element size");
    if (nbits % 8 != 0)  // safetensors' MisalignedSlice
      throw format_error(ctx + ": " + std::to_string(numel) + " " + dt + " elements of " + std::to_string(d->bits) +
                         " bits are not a whole number of bytes");
    t.nbytes = nbits / 8;
    const uint64_t begin = e.offsets[0], end = e.offsets[1];
    if (begin > end || end > data_size)
      throw format_error(ctx + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                         ") lie outside the " + std::to_string(data_size) + "-byte data section");
    if (end - begin != t.nbytes)
      throw format_error(ctx + ": data_offsets span " + std::to_string(end - begin) + " bytes but shape × " + dt +
                         " needs " + std::to_string(t.nbytes));
    const uint8_t *p = base + begin;
    t.offset = 8 + n + begin;
    t.in_place = true;
    const uint64_t len = t.nbytes;
    t.emit = [p, len](const PieceFn &fn) { emit_bytes(p, len, 1, fn); };
    ranges.push_back({begin, end, name});
    r.tensors.push_back(std::move(t));
    e = HeaderEntry();  // its strings are copied: free them as we go
  }
  refuse_overlapping(std::move(ranges), what);
  return r;
}

}  // namespace zt::foreign
