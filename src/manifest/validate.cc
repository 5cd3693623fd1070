// The per-component reading rules of docs/reading-rules.md that need no data bytes:
// alignment, bounds, shape products, lengths against shapes, zstd sizes and
// limits, and blob overlap.
#include <algorithm>

#include "manifest/decode.h"
#include "types/dtype.h"
#include "util/error.h"

namespace zt {

void validate_component(Component &c, const Object &obj, const Manifest &m, const DecodeLimits &limits) {
  auto bad = [&](zt_status s, const std::string &msg) {
    if (c.status == ZT_OK) {
      c.status = s;
      c.error = where(obj.name, c.role) + ": " + msg;
    }
  };
  // Built only when a rule fails: this runs for every component at open.
  auto at = [&] { return "offset " + std::to_string(c.offset); };
  if (c.offset % 64 != 0) bad(ZT_E_ALIGNMENT, at() + " is not aligned to 64 bytes");
  // An empty blob holds no bytes: the spec asks only that it be aligned and
  // end within the file, and writers that pad only before real bytes put
  // one at offset 0 or just past the last blob, beyond the manifest's start.
  const bool empty_in_file = c.length == 0 && limits.file_size != 0;
  if (c.offset < 8 && c.length != 0) bad(ZT_E_BOUNDS, at() + " lies inside the 8-byte header");
  auto end = checked_add(c.offset, c.length);
  if (!end)
    bad(ZT_E_BOUNDS, at() + " + length " + std::to_string(c.length) + " overflows 64 bits");
  else if (empty_in_file ? *end > limits.file_size : *end > m.data_end)
    bad(ZT_E_BOUNDS, empty_in_file ? "empty blob at " + at() + " lies past the end of the file (" +
                                         std::to_string(limits.file_size) + " bytes)"
                                   : "blob [" + std::to_string(c.offset) + ", " + std::to_string(*end) +
                                         ") runs past the start of the manifest at " + std::to_string(m.data_end));

  if (c.has_type) {
    const LogicalType *lt = logical_type_find(c.logical_type);
    if (lt) {
      c.ratio = lt->ratio;
      if (lt->storage != c.dtype)
        bad(ZT_E_DTYPE, "logical type '" + c.logical_type + "' must be stored as " + dtype_name(lt->storage) +
                            ", not " + c.dtype_name);
    }
  }
  const uint64_t elem = dtype_size(c.dtype) * c.ratio;
  const bool dense_data = obj.format == "dense" && c.role == "data";
  auto numel = shape_numel(obj.shape);
  std::optional<uint64_t> expected;
  if (dense_data) {
    if (!numel) {
      bad(ZT_E_SHAPE, "the product of the shape overflows 64 bits");
      return;
    }
    expected = dense_byte_size(obj.shape, c.dtype, c.ratio);
    if (!expected) {
      bad(ZT_E_SHAPE, "shape × element size (" + std::to_string(elem) + ") overflows 64 bits");
      return;
    }
  }

  if (c.encoding == ZT_ENCODING_RAW) {
    c.decoded_length = c.length;
  } else if (c.encoding == ZT_ENCODING_ZSTD) {
    if (c.has_uncompressed_length) {
      c.decoded_length = c.uncompressed_length;
    } else if (m.spec == SpecVersion::V1_2 && limits.strict) {
      bad(ZT_E_NO_UNCOMPRESSED_LENGTH, "zstd component has no uncompressed_length (spec 1.2 requires it)");
      return;
    } else {
      // Legacy files, and 1.2 files that leave the field out (the spec
      // requires it, but the original implementation reads them): the size
      // the shape implies, checked by the decode; without one the size is
      // learned from the frame or by a decode bounded by max_decoded_size.
      c.missing_uncompressed_length = m.spec == SpecVersion::V1_2;
      if (expected) {
        c.decoded_length = *expected;
      } else {
        c.decoded_known = false;
        c.decoded_length = 0;
      }
    }
    if (c.decoded_length > limits.max_decoded_size) {
      bad(ZT_E_LIMIT, "decoded size " + std::to_string(c.decoded_length) + " exceeds the limit of " +
                          std::to_string(limits.max_decoded_size) + " bytes");
      return;
    }
  }
  if (expected && c.decoded_known && c.decoded_length != *expected) {
    bad(ZT_E_LENGTH, std::string(c.encoding == ZT_ENCODING_ZSTD ? "uncompressed_length " : "length ") +
                         std::to_string(c.decoded_length) +
                         " does not match shape × element size = " + std::to_string(*expected));
  } else if (!expected && elem && c.decoded_known && c.decoded_length % elem != 0) {
    bad(ZT_E_LENGTH, "decoded length " + std::to_string(c.decoded_length) + " is not a multiple of the element size " +
                         std::to_string(elem));
  }
}

void validate_overlaps(Manifest &m) {
  struct Range {
    uint64_t begin, end;
    Component *c;
    const Object *o;
  };
  std::vector<Range> ranges;
  for (auto &o : m.objects)
    for (auto &c : o.components)
      if (c.status == ZT_OK && c.length > 0) ranges.push_back({c.offset, c.offset + c.length, &c, &o});
  if (ranges.size() < 2) return;
  auto by_position = [](const Range &a, const Range &b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  };
  // Files written in name order are usually already sorted by offset.
  if (!std::is_sorted(ranges.begin(), ranges.end(), by_position)) std::sort(ranges.begin(), ranges.end(), by_position);
  // The range reaching furthest so far; identical ranges are a shared blob.
  size_t far = 0;
  for (size_t i = 1; i < ranges.size(); ++i) {
    Range &r = ranges[i], &f = ranges[far];
    if (r.begin == f.begin && r.end == f.end) continue;
    if (r.begin < f.end) {
      auto mark = [](Range &x, const Range &y) {
        if (x.c->status != ZT_OK) return;
        x.c->status = ZT_E_OVERLAP;
        x.c->error = where(x.o->name, x.c->role) + ": blob [" + std::to_string(x.begin) + ", " + std::to_string(x.end) +
                     ") partially overlaps " + where(y.o->name, y.c->role) + " at [" + std::to_string(y.begin) + ", " +
                     std::to_string(y.end) + ")";
      };
      mark(r, f);
      mark(f, r);
    }
    if (r.end > f.end) far = i;
  }
}

}  // namespace zt
