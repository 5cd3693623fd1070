// zt_file_object_table: every object's name, shape, format and "data"
// component in one allocation, so a binding lists a file of 10^5 tensors in
// one call instead of several per tensor.
#include <cstdlib>
#include <cstring>
#include <limits>

#include "handles.h"

using namespace zt;
using namespace zt::capi;

namespace {

size_t align8(size_t n) {
  return (n + 7) / 8 * 8;
}

}  // namespace

extern "C" {

ZT_API zt_status zt_file_object_table(const zt_file *file, zt_object_table **out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_object_table");
    if (!out) invalid("zt_file_object_table: out is NULL");
    *out = nullptr;
    size_t count = f.objects.size(), names_len = 0, dims_len = 0;
    for (const zt_object &o : f.objects) {
      names_len += o.obj->name.size() + 1;  // each followed by a NUL
      dims_len += o.obj->shape.size();
    }
    // One block: header, rows, dims (8-aligned), names.
    size_t rows_at = align8(sizeof(zt_object_table));
    size_t dims_at = rows_at + count * sizeof(zt_object_row);
    size_t names_at = dims_at + dims_len * sizeof(uint64_t);
    auto *block = static_cast<unsigned char *>(std::malloc(names_at + names_len + 1));  // + 1: never 0
    if (!block) throw std::bad_alloc();
    auto *table = reinterpret_cast<zt_object_table *>(block);
    auto *rows = reinterpret_cast<zt_object_row *>(block + rows_at);
    auto *dims = reinterpret_cast<uint64_t *>(block + dims_at);
    char *names = reinterpret_cast<char *>(block + names_at);
    table->count = count;
    table->row_size = sizeof(zt_object_row);
    table->rows = rows;
    table->names = names;
    table->names_len = names_len;
    table->dims = dims;
    table->dims_len = dims_len;
    uint64_t name_off = 0, dims_off = 0;
    for (size_t i = 0; i < count; ++i) {
      const zt_object &o = f.objects[i];
      const Object &m = *o.obj;
      zt_object_row &r = rows[i];
      std::memset(&r, 0, sizeof r);
      r.object = &o;
      r.name_offset = name_off;
      r.name_len = m.name.size();
      if (!m.name.empty()) std::memcpy(names + name_off, m.name.data(), m.name.size());
      name_off += m.name.size();
      names[name_off++] = '\0';
      r.dims_offset = dims_off;
      r.ndim = static_cast<uint32_t>(m.shape.size());
      if (!m.shape.empty()) std::memcpy(dims + dims_off, m.shape.data(), m.shape.size() * sizeof(uint64_t));
      dims_off += m.shape.size();
      r.dense = m.format == "dense" ? 1 : 0;
      r.data_component = std::numeric_limits<uint64_t>::max();
      r.data_dtype = -1;
      for (size_t c = 0; c < m.components.size(); ++c) {
        const Component &comp = m.components[c];
        if (comp.role != "data") continue;
        r.data_component = c;
        r.data_dtype = comp.dtype;
        r.data_has_logical_type = comp.has_type ? 1 : 0;
        r.data_decoded_length = comp.decoded_length;
        break;
      }
      r.status = m.status;
    }
    *out = table;
    return ZT_OK;
  });
}

}  // extern "C"
