// Objects and components of an open file: description, reads, views,
// verification.
#include <cstring>
#include <string_view>

#include "handles.h"
#include "manifest/decode.h"
#include "manifest/json.h"
#include "types/dtype.h"
#include "util/size_cast.h"

using namespace zt;
using namespace zt::capi;

namespace {

// The index of the component whose role is exactly `role` (NULs included).
size_t component_by_role(const zt_object &o, std::string_view role) {
  const auto &comps = o.obj->components;
  for (size_t i = 0; i < comps.size(); ++i)
    if (comps[i].role == role) return i;
  fail(ZT_E_NOT_FOUND, where(o.obj->name) + " has no component '" + printable(std::string(role)) + "'");
}

}  // namespace

extern "C" {

ZT_API zt_status zt_object_get_info(const zt_object *obj, zt_object_info *out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_get_info");
    check_out_struct(out, "zt_object_get_info", ZT_SIZE_THROUGH(zt_object_info, has_attributes));
    const Object &m = *o.obj;
    out->name = m.name.c_str();
    out->name_len = m.name.size();
    out->format = m.format.c_str();
    out->ndim = m.shape.size();
    out->shape = m.shape.data();
    out->component_count = m.components.size();
    out->status = m.status;
    out->has_attributes = m.has_attributes ? 1 : 0;
    if (ZT_HAS_FIELD(out, format_len)) out->format_len = m.format.size();
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_error(const zt_object *obj, const char **out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_error");
    if (!out) invalid("zt_object_error: out is NULL");
    *out = o.obj->error.c_str();
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_numel(const zt_object *obj, uint64_t *out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_numel");
    if (!out) invalid("zt_object_numel: out is NULL");
    auto n = shape_numel(o.obj->shape);
    if (!n) fail(ZT_E_SHAPE, where(o.obj->name) + ": the product of the shape overflows 64 bits");
    *out = *n;
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_attributes_cbor(const zt_object *obj, const uint8_t **out, size_t *out_len) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_attributes_cbor");
    if (!out || !out_len) invalid("zt_object_attributes_cbor: out is NULL");
    const Object &m = *o.obj;
    *out = m.has_attributes ? reinterpret_cast<const uint8_t *>(m.attributes.data()) : nullptr;
    *out_len = m.has_attributes ? m.attributes.size() : 0;
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_attributes_json(const zt_object *obj, char **out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_attributes_json");
    if (!out) invalid("zt_object_attributes_json: out is NULL");
    *out = nullptr;
    *out = dup_string(o.obj->has_attributes ? cbor_to_json(o.obj->attributes) : "null");
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_extra_fields_cbor(const zt_object *obj, uint8_t **out, size_t *out_len) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_extra_fields_cbor");
    if (!out || !out_len) invalid("zt_object_extra_fields_cbor: out is NULL");
    *out = nullptr;
    *out_len = 0;
    if (o.obj->extra.empty()) return ZT_OK;
    std::string enc = encode_raw_map(o.obj->extra);
    *out = dup_bytes(enc);
    *out_len = enc.size();
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_component(const zt_object *obj, size_t index, zt_component_info *out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_component");
    check_out_struct(out, "zt_object_component", ZT_SIZE_THROUGH(zt_component_info, status));
    const Component &c = component_ref(o, index, "zt_object_component");
    out->role = c.role.c_str();
    out->dtype = c.dtype;
    out->dtype_name = c.dtype_name.c_str();
    out->logical_type = c.has_type ? c.logical_type.c_str() : nullptr;
    out->ratio = c.ratio;
    out->encoding = c.encoding;
    out->encoding_name = c.encoding_name.c_str();
    out->offset = c.offset;
    out->length = c.length;
    out->decoded_length = c.decoded_length;
    out->has_uncompressed_length = c.has_uncompressed_length;
    out->big_endian = c.big_endian;
    out->digest = c.has_digest ? c.digest.c_str() : nullptr;
    out->digest_alg = c.has_digest ? c.parsed_digest.alg : ZT_DIGEST_NONE;
    out->status = c.status;
    // 1.3 fields, written only into a struct that has them.
    if (ZT_HAS_FIELD(out, encoding_name_len)) {
      out->role_len = c.role.size();
      out->dtype_name_len = c.dtype_name.size();
      out->logical_type_len = c.has_type ? c.logical_type.size() : 0;
      out->encoding_name_len = c.encoding_name.size();
    }
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_component_index(const zt_object *obj, const char *role, size_t *out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_component_index");
    if (!role || !out) invalid("zt_object_component_index: role or out is NULL");
    *out = component_by_role(o, role);
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_component_index_n(const zt_object *obj, const char *role, size_t role_len, size_t *out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_component_index_n");
    if ((!role && role_len) || !out) invalid("zt_object_component_index_n: role or out is NULL");
    *out = component_by_role(o, std::string_view(role ? role : "", role_len));
    return ZT_OK;
  });
}

}  // extern "C"

namespace {

// The size checks of a whole-component read into the caller's buffer:
// `need` bytes (`what`: "stored" or "decoded"), reported through *out_size
// (0 until known) even when the buffer is too small. `beyond` says what to
// use instead when this process cannot address that many bytes.
void check_read_size(const zt_object &o, const Component &c, uint64_t need, const char *what, const char *beyond,
                     void *dst, size_t dst_capacity, size_t *out_size, const char *fn) {
  if (!fits_size_t(need))  // *out_size cannot hold it: say so rather than cut it short
    fail(ZT_E_LIMIT, where(o.obj->name, c.role) + ": " + what + " size is " + std::to_string(need) +
                         " bytes, more than this process can address" + beyond);
  if (out_size) *out_size = static_cast<size_t>(need);
  if (dst_capacity < need)
    fail(ZT_E_BUFFER_TOO_SMALL, where(o.obj->name, c.role) + ": " + what + " size is " + std::to_string(need) +
                                    " bytes, buffer has " + std::to_string(dst_capacity));
  if (!dst && need) invalid((std::string(fn) + ": dst is NULL").c_str());
}

}  // namespace

extern "C" {

ZT_API zt_status zt_component_read_stored(const zt_object *obj, size_t index, void *dst, size_t dst_capacity,
                                          size_t *out_size) {
  return guard([&] {
    const char *fn = "zt_component_read_stored";
    const zt_object &o = object_ref(obj, fn);
    const Component &c = component_ref(o, index, fn);
    if (out_size) *out_size = 0;
    check_read_size(o, c, c.length, "stored", "", dst, dst_capacity, out_size, fn);
    size_t n = o.reader->read_stored(*o.obj, c, dst, dst_capacity);
    if (out_size) *out_size = n;
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_read(const zt_object *obj, size_t index, void *dst, size_t dst_capacity,
                                   size_t *out_size) {
  return guard([&] {
    const char *fn = "zt_component_read";
    const zt_object &o = object_ref(obj, fn);
    const Component &c = component_ref(o, index, fn);
    if (out_size) *out_size = 0;
    check_read_size(o, c, o.reader->decoded_size(*o.obj, c), "decoded", "; use zt_component_read_range", dst,
                    dst_capacity, out_size, fn);
    size_t n = o.reader->read(*o.obj, c, dst, dst_capacity);
    if (out_size) *out_size = n;
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_read_range(const zt_object *obj, size_t index, uint64_t first, uint64_t count, void *dst,
                                         size_t dst_capacity) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_component_read_range");
    const Component &c = component_ref(o, index, "zt_component_read_range");
    if (!dst && count) invalid("zt_component_read_range: dst is NULL");
    o.reader->read_range(*o.obj, c, first, count, dst, dst_capacity);
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_read_slice(const zt_object *obj, size_t index, size_t ndim, const uint64_t *start,
                                         const uint64_t *stop, void *dst, size_t dst_capacity) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_component_read_slice");
    const Component &c = component_ref(o, index, "zt_component_read_slice");
    o.reader->read_slice(*o.obj, c, ndim, start, stop, dst, dst_capacity);
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_read_slices(const zt_file *file, const zt_slice_request *reqs, size_t n) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_read_slices");
    if (n && !reqs) invalid("zt_file_read_slices: reqs is NULL");
    const Source &src = f.reader->source();
    // Every slice's ranges are queued, then fetched as one plan; a failure
    // anywhere drops the queue (its buffers are the caller's, unfilled).
    struct PlanScope {
      const Source &src;
      bool done = false;
      ~PlanScope() {
        if (!done) src.end_plan(false);
      }
    } scope{src};
    src.begin_plan();
    for (size_t i = 0; i < n; ++i) {
      const std::string fn = "zt_file_read_slices: request " + std::to_string(i);
      const zt_object &o = object_ref(reqs[i].object, fn.c_str());
      if (o.file != file) invalid((fn + ": the object belongs to another file").c_str());
      const Component &c = component_ref(o, reqs[i].component, fn.c_str());
      o.reader->read_slice(*o.obj, c, reqs[i].ndim, reqs[i].start, reqs[i].stop, reqs[i].dst, reqs[i].dst_capacity);
    }
    scope.done = true;
    src.end_plan(true);
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_view(const zt_object *obj, size_t index, const void **out, size_t *out_len) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_component_view");
    if (!out || !out_len) invalid("zt_component_view: out is NULL");
    *out = nullptr;
    *out_len = 0;
    const Component &c = component_ref(o, index, "zt_component_view");
    size_t len = 0;
    *out = o.reader->view(*o.obj, c, &len);
    *out_len = len;
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_view_unaligned(const zt_object *obj, size_t index, const void **out, size_t *out_len) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_component_view_unaligned");
    if (!out || !out_len) invalid("zt_component_view_unaligned: out is NULL");
    *out = nullptr;
    *out_len = 0;
    const Component &c = component_ref(o, index, "zt_component_view_unaligned");
    size_t len = 0;
    *out = o.reader->view(*o.obj, c, &len, true);
    *out_len = len;
    return ZT_OK;
  });
}

ZT_API zt_status zt_component_verify(const zt_object *obj, size_t index, zt_verify_result *out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_component_verify");
    const Component &c = component_ref(o, index, "zt_component_verify");
    zt_verify_result r = o.reader->verify_component(*o.obj, c, o.reader->options().strict);
    if (out) *out = r;
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_verify(const zt_object *obj) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_verify");
    o.reader->verify_object(*o.obj, o.reader->options().strict);
    return ZT_OK;
  });
}

}  // extern "C"
