// The C ABI of ztensor_composite.h: writing sparse and quantized objects
// (checked before anything is written), strict structural validation,
// densify, dequantize and element conversion to f32.
#include <cstring>
#include <string>
#include <vector>

#include "composite/parts.h"
#include "composite/quantized.h"
#include "composite/sparse.h"
#include "composite/to_f32.h"
#include "composite/validate.h"
#include "handles.h"
#include "types/dtype.h"
#include "ztensor_composite.h"

using namespace zt;
using namespace zt::capi;

namespace {

std::string name_str(const char *name, size_t len, const char *fn) {
  if (!name && len) invalid((std::string(fn) + ": name is NULL").c_str());
  return std::string(name ? name : "", len);
}

// The logical type of opts, if any (struct_size is checked by zt_write_blob).
std::string logical_of(const zt_blob_options *opts) {
  if (opts && ZT_HAS_FIELD(opts, logical_type) && opts->logical_type) return opts->logical_type;
  return {};
}

// opts without its logical type: for index components.
zt_blob_options index_options(const zt_blob_options *opts) {
  zt_blob_options o;
  if (opts)
    o = current_struct(*opts, zt_blob_options_init);
  else
    zt_blob_options_init(&o);
  o.logical_type = nullptr;
  return o;
}

// Bytes of nnz values of dtype (× the logical type's ratio); overflow checked.
size_t values_bytes(const std::string &object, zt_dtype dtype, const std::string &logical, uint64_t nnz) {
  if (!dtype_size(dtype)) fail(ZT_E_INVALID_ARG, where(object, "values") + ": values_dtype is not a storage dtype");
  const LogicalType *lt = logical.empty() ? nullptr : logical_type_find(logical);
  auto b = checked_mul(nnz, dtype_size(dtype) * (lt ? lt->ratio : 1));
  if (!b || *b > SIZE_MAX) fail(ZT_E_LIMIT, where(object, "values") + ": nnz × element size overflows");
  return static_cast<size_t>(*b);
}

size_t u64_bytes(const std::string &object, const char *role, uint64_t count) {
  auto b = checked_mul(count, 8);
  if (!b || *b > SIZE_MAX) fail(ZT_E_LIMIT, where(object, role) + ": array size overflows");
  return static_cast<size_t>(*b);
}

void write_component(zt_writer *w, const std::string &name, const char *role, zt_dtype dtype, const void *data,
                     size_t len, const zt_blob_options *opts) {
  static const uint8_t kEmpty = 0;
  ok_or_throw(zt_write_blob(w, name.data(), name.size(), role, dtype, data ? data : &kEmpty, len, opts));
}

const Object &object_of(const zt_object *obj, const char *fn) {
  return *object_ref(obj, fn).obj;
}

// The object's own damage, or that of any component: what a strict verify
// reports before it looks at the structure.
void check_components_readable(const zt_object &o) {
  const Object &m = *o.obj;
  if (m.status != ZT_OK) fail(m.status, m.error);
  for (const auto &c : m.components) o.reader->check_readable(m, c);
}

}  // namespace

extern "C" {

ZT_API zt_status zt_writer_add_csr(zt_writer *w, const char *name, size_t name_len, uint64_t rows, uint64_t cols,
                                   zt_dtype values_dtype, const void *values, uint64_t nnz, const uint64_t *indices,
                                   const uint64_t *indptr, const zt_blob_options *opts) {
  return guard([&] {
    const char *fn = "zt_writer_add_csr";
    writer_ref(w, fn);
    const std::string object = name_str(name, name_len, fn);
    const std::string logical = logical_of(opts);
    const size_t vbytes = values_bytes(object, values_dtype, logical, nnz);
    if (!indptr) invalid("zt_writer_add_csr: indptr is NULL");
    if (nnz && (!values || !indices)) invalid("zt_writer_add_csr: values or indices is NULL with nnz > 0");
    auto rows1 = checked_add(rows, 1);
    if (!rows1) fail(ZT_E_SPARSE_INDPTR, where(object, "indptr") + ": rows + 1 overflows");
    CsrArrays a;
    a.rows = rows;
    a.cols = cols;
    a.indices = indices;
    a.nnz = nnz;
    a.indptr = indptr;
    a.indptr_count = *rows1;
    a.values_count = nnz;
    check_csr(object, a);
    const size_t ibytes = u64_bytes(object, "indices", nnz), pbytes = u64_bytes(object, "indptr", *rows1);
    const uint64_t shape[2] = {rows, cols};
    NewObject declared(w, object, "sparse_csr", shape, 2);
    zt_blob_options iopts = index_options(opts);
    write_component(w, object, "values", values_dtype, values, vbytes, opts);
    write_component(w, object, "indices", ZT_U64, indices, ibytes, &iopts);
    write_component(w, object, "indptr", ZT_U64, indptr, pbytes, &iopts);
    declared.keep();
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_add_coo(zt_writer *w, const char *name, size_t name_len, const uint64_t *shape, size_t ndim,
                                   zt_dtype values_dtype, const void *values, uint64_t nnz, const uint64_t *coords,
                                   const zt_blob_options *opts) {
  return guard([&] {
    const char *fn = "zt_writer_add_coo";
    writer_ref(w, fn);
    const std::string object = name_str(name, name_len, fn);
    const std::string logical = logical_of(opts);
    const size_t vbytes = values_bytes(object, values_dtype, logical, nnz);
    if (!shape && ndim) invalid("zt_writer_add_coo: shape is NULL with ndim > 0");
    if (ndim == 0) fail(ZT_E_SHAPE, where(object) + ": sparse_coo needs at least one dimension");
    if (nnz && (!values || !coords)) invalid("zt_writer_add_coo: values or coords is NULL with nnz > 0");
    auto ccount = checked_mul(ndim, nnz);
    if (!ccount) fail(ZT_E_LIMIT, where(object, "coords") + ": ndim × nnz overflows");
    CooArrays a;
    a.shape.assign(shape, shape + ndim);
    a.coords = coords;
    a.coords_count = *ccount;
    a.values_count = nnz;
    check_coo(object, a);
    const size_t cbytes = u64_bytes(object, "coords", *ccount);
    NewObject declared(w, object, "sparse_coo", shape, ndim);
    zt_blob_options iopts = index_options(opts);
    write_component(w, object, "values", values_dtype, values, vbytes, opts);
    write_component(w, object, "coords", ZT_U64, coords, cbytes, &iopts);
    declared.keep();
    return ZT_OK;
  });
}

ZT_API void zt_quant_params_init(zt_quant_params *params) {
  if (!init_struct(params)) return;
  params->bits = 4;
  params->group_size = 128;
  params->packing = "8_per_i32";
  params->packed_dtype = ZT_I32;
  params->scales_dtype = ZT_F16;
  params->zeros_dtype = ZT_F16;
}

ZT_API zt_status zt_writer_add_quantized_group(zt_writer *w, const char *name, size_t name_len, const uint64_t *shape,
                                               size_t ndim, const zt_quant_params *p, const zt_blob_options *opts) {
  return guard([&] {
    const char *fn = "zt_writer_add_quantized_group";
    writer_ref(w, fn);
    const std::string object = name_str(name, name_len, fn);
    if (!p || !ZT_HAS_FIELD(p, zeros_len))
      invalid("zt_writer_add_quantized_group: params is NULL or struct_size unset (call zt_quant_params_init)");
    if (!p->packing) fail(ZT_E_QUANT_PARAMS, where(object) + ": packing is NULL");
    if (!shape && ndim) invalid("zt_writer_add_quantized_group: shape is NULL with ndim > 0");
    if ((!p->packed && p->packed_len) || (!p->scales && p->scales_len))
      invalid("zt_writer_add_quantized_group: packed or scales is NULL with a length");
    std::vector<uint64_t> dims(shape, shape + ndim);
    const bool has_zeros = p->zeros != nullptr;
    check_quant_arrays(object, dims, p->bits, p->group_size, p->packing, p->packed_dtype, p->packed_len,
                       p->scales_dtype, p->scales_len, has_zeros, p->zeros_dtype, p->zeros_len);
    const std::string attrs = encode_quant_attributes(p->bits, p->group_size, p->packing);
    NewObject declared(w, object, "quantized_group", shape, ndim);
    ok_or_throw(zt_writer_set_object_attributes_cbor(w, object.data(), object.size(),
                                                     reinterpret_cast<const uint8_t *>(attrs.data()), attrs.size()));
    zt_blob_options plain = index_options(opts);
    write_component(w, object, "packed_weight", p->packed_dtype, p->packed, p->packed_len, &plain);
    write_component(w, object, "scales", p->scales_dtype, p->scales, p->scales_len, &plain);
    if (has_zeros) write_component(w, object, "zeros", p->zeros_dtype, p->zeros, p->zeros_len, &plain);
    declared.keep();
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_validate(const zt_object *obj) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_validate");
    check_components_readable(o);
    validate_object_structure(*o.reader, *o.obj);
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_sparse_info(const zt_object *obj, zt_sparse_info *out) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_sparse_info");
    const Object &m = *o.obj;
    check_out_struct(out, "zt_object_sparse_info");
    const bool csr = is_csr_format(m.format);
    if (!csr && !is_coo_format(m.format))
      fail(ZT_E_WRONG_FORMAT, where(m.name) + ": format is '" + m.format + "', not sparse_csr or sparse_coo");
    auto index_of = [&](const char *role) {
      return static_cast<size_t>(&require_component(m, role) - m.components.data());
    };
    out->is_csr = csr ? 1 : 0;
    out->values_index = index_of("values");
    out->indices_index = index_of(csr ? "indices" : "coords");
    out->indptr_index = csr ? index_of("indptr") : SIZE_MAX;
    const Component &v = m.components[out->values_index];
    auto numel = shape_numel(m.shape);
    if (!numel) fail(ZT_E_SHAPE, where(m.name) + ": the product of the shape overflows");
    out->nnz = element_count(*o.reader, m, v);
    out->numel = *numel;
    out->density = *numel ? static_cast<double>(out->nnz) / static_cast<double>(*numel) : 0.0;
    out->values_dtype = v.dtype;
    out->values_logical_type = v.has_type ? v.logical_type.c_str() : nullptr;
    out->values_element_size = element_bytes(v);
    out->index_dtype = m.components[out->indices_index].dtype;
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_read_index(const zt_object *obj, const char *role, uint64_t *dst, size_t dst_count,
                                      size_t *out_count) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_read_index");
    if (!role) invalid("zt_object_read_index: role is NULL");
    const Component &c = require_component(*o.obj, role);
    if (!dtype_is_integer(c.dtype))
      fail(ZT_E_INDEX_DTYPE, where(o.obj->name, c.role) + ": dtype " + c.dtype_name + " is not an integer dtype");
    // decoded_size: a 1.1 zstd index declares no size and is decoded to count it.
    const uint64_t count = o.reader->decoded_size(*o.obj, c) / dtype_size(c.dtype);
    if (out_count) *out_count = static_cast<size_t>(count);
    if (count > dst_count)
      fail(ZT_E_BUFFER_TOO_SMALL, where(o.obj->name, c.role) + ": " + std::to_string(count) +
                                      " entries do not fit in " + std::to_string(dst_count));
    const zt_status neg = std::string(role) == "indptr" ? ZT_E_SPARSE_INDPTR : ZT_E_SPARSE_INDEX;
    std::vector<uint64_t> v = read_index_component(*o.reader, *o.obj, c, neg);
    if (v.size() > dst_count)  // never write past dst, whatever the count said
      fail(ZT_E_BUFFER_TOO_SMALL, where(o.obj->name, c.role) + ": " + std::to_string(v.size()) +
                                      " entries do not fit in " + std::to_string(dst_count));
    if (!v.empty()) std::memcpy(dst, v.data(), v.size() * 8);
    if (out_count) *out_count = v.size();
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_densify(const zt_object *obj, void *dst, size_t dst_capacity, size_t *out_size) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_densify");
    const Object &m = *o.obj;
    check_components_readable(o);
    LoadedSparse s = load_sparse(*o.reader, m);
    const size_t elem = element_bytes(*s.values);
    auto numel = shape_numel(m.shape);
    auto total = numel ? checked_mul(*numel, elem) : std::nullopt;
    if (!total || *total > SIZE_MAX) fail(ZT_E_LIMIT, where(m.name) + ": the dense size overflows");
    if (out_size) *out_size = static_cast<size_t>(*total);
    if (*total > dst_capacity)
      fail(ZT_E_BUFFER_TOO_SMALL, where(m.name) + ": the dense tensor needs " + std::to_string(*total) +
                                      " bytes, the buffer holds " + std::to_string(dst_capacity));
    if (*total == 0) return ZT_OK;  // dst may be NULL: nothing to write, not even a memset
    if (!dst) fail(ZT_E_INVALID_ARG, "zt_object_densify: dst is NULL with a non-zero capacity");
    std::vector<uint8_t> values = o.reader->read_vector(m, *s.values);
    auto *d = static_cast<uint8_t *>(dst);
    if (s.csr)
      densify_csr(s.csr_arrays(m), values.data(), elem, d);
    else
      densify_coo(s.coo_arrays(m), values.data(), elem, d);
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_quant_info(const zt_object *obj, zt_quant_info *out) {
  return guard([&] {
    const Object &m = object_of(obj, "zt_object_quant_info");
    check_out_struct(out, "zt_object_quant_info");
    QuantLayout q = describe_quantized(m);
    out->bits = static_cast<uint32_t>(q.bits);
    out->group_size = q.group_size;
    out->packing = q.packing ? q.packing->name : nullptr;
    out->packing_inferred = !q.has_packing_attr && q.packing ? 1 : 0;
    out->has_zeros = q.zeros ? 1 : 0;
    out->packed_role = q.packed->role == "data" ? "data" : "packed_weight";
    out->rows = q.rows;
    out->cols = q.cols;
    out->groups = q.groups;
    return ZT_OK;
  });
}

ZT_API zt_status zt_object_dequantize(const zt_object *obj, float *dst, size_t count) {
  return guard([&] {
    const zt_object &o = object_ref(obj, "zt_object_dequantize");
    check_components_readable(o);
    QuantLayout q = describe_quantized(*o.obj);
    const uint64_t numel = q.rows * q.cols;  // no overflow: checked by describe_quantized
    if (numel > count)
      fail(ZT_E_BUFFER_TOO_SMALL,
           where(o.obj->name) + ": " + std::to_string(numel) + " values do not fit in " + std::to_string(count));
    if (numel && !dst) invalid("zt_object_dequantize: dst is NULL");
    dequantize(*o.reader, *o.obj, dst);
    return ZT_OK;
  });
}

ZT_API zt_status zt_convert_to_f32(zt_dtype dtype, const char *logical_type, const void *src, size_t src_len,
                                   float *dst, size_t dst_count) {
  return guard([&] {
    const size_t es = dtype_size(dtype);
    if (!es) invalid("zt_convert_to_f32: dtype is not a storage dtype");
    if (src_len % es)
      invalid(("zt_convert_to_f32: " + std::to_string(src_len) + " bytes is not a whole number of " +
               dtype_name(dtype) + " elements")
                  .c_str());
    const size_t count = src_len / es;
    if (count && (!src || !dst)) invalid("zt_convert_to_f32: src or dst is NULL");
    if (count > dst_count)
      fail(ZT_E_BUFFER_TOO_SMALL,
           "zt_convert_to_f32: " + std::to_string(count) + " elements do not fit in " + std::to_string(dst_count));
    elements_to_f32(dtype, logical_type ? logical_type : "", static_cast<const uint8_t *>(src), count, dst);
    return ZT_OK;
  });
}

}  // extern "C"
