#include "composite/sparse.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "composite/parts.h"
#include "types/dtype.h"
#include "util/error.h"
#include "v2/rule.h"

namespace zt {
namespace {

std::string n(uint64_t v) {
  return std::to_string(v);
}

}  // namespace

void check_csr(const std::string &object, const CsrArrays &a) {
  const std::string ip = where(object, "indptr");
  auto rows1 = checked_add(a.rows, 1);
  if (!rows1 || a.indptr_count != *rows1)
    fail(ZT_E_SPARSE_INDPTR, ip + ": has " + n(a.indptr_count) + " entries, but rows + 1 = " +
                                 (rows1 ? n(*rows1) : std::string("2^64")) + " are needed");
  if (a.indptr[0] != 0) fail(ZT_E_SPARSE_INDPTR, ip + ": entry 0 is " + n(a.indptr[0]) + ", not 0");
  for (uint64_t r = 0; r < a.rows; ++r)
    if (a.indptr[r + 1] < a.indptr[r])
      fail(ZT_E_SPARSE_INDPTR,
           ip + ": decreases at entry " + n(r + 1) + " (" + n(a.indptr[r]) + " then " + n(a.indptr[r + 1]) + ")");
  if (a.indptr[a.rows] != a.nnz)
    fail(ZT_E_SPARSE_INDPTR, ip + ": last entry (" + n(a.rows) + ") is " + n(a.indptr[a.rows]) + ", but there are " +
                                 n(a.nnz) + " indices (nnz)");
  if (a.values_count != a.nnz)
    fail(ZT_E_SPARSE_NNZ, where(object, "values") + ": has " + n(a.values_count) + " elements, but there are " +
                              n(a.nnz) + " indices (nnz)");
  for (uint64_t i = 0; i < a.nnz; ++i)
    if (a.indices[i] >= a.cols)
      fail(ZT_E_SPARSE_INDEX, where(object, "indices") + ": entry " + n(i) + " is " + n(a.indices[i]) +
                                  ", not below the " + n(a.cols) + " columns");
}

void check_coo(const std::string &object, const CooArrays &a) {
  const uint64_t ndim = a.shape.size();
  auto want = checked_mul(ndim, a.values_count);
  if (!want || a.coords_count != *want)
    fail(ZT_E_SPARSE_NNZ, where(object, "coords") + ": has " + n(a.coords_count) + " entries, but ndim × nnz = " +
                              n(ndim) + " × " + n(a.values_count) + " (nnz = number of values) are needed");
  const uint64_t nnz = a.values_count;
  for (uint64_t d = 0; d < ndim; ++d)
    for (uint64_t i = 0; i < nnz; ++i) {
      uint64_t v = a.coords[d * nnz + i];
      if (v >= a.shape[d])
        fail(ZT_E_SPARSE_INDEX, where(object, "coords") + ": entry " + n(d * nnz + i) + " (dimension " + n(d) +
                                    " of value " + n(i) + ") is " + n(v) + ", not below " + n(a.shape[d]));
    }
}

void check_sparse_shape(const Object &obj) {
  if (is_csr_format(obj.format) && obj.shape.size() != 2)
    fail(ZT_E_SHAPE, where(obj.name) + ": sparse_csr needs a 2-D shape, not " + n(obj.shape.size()) + "-D");
  if (is_coo_format(obj.format) && obj.shape.empty())
    fail(ZT_E_SHAPE, where(obj.name) + ": sparse_coo needs at least one dimension");
}

void densify_csr(const CsrArrays &a, const uint8_t *values, size_t elem, uint8_t *dst) {
  std::memset(dst, 0, a.rows * a.cols * elem);
  for (uint64_t r = 0; r < a.rows; ++r)
    for (uint64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k)
      std::memcpy(dst + (r * a.cols + a.indices[k]) * elem, values + k * elem, elem);
}

void densify_coo(const CooArrays &a, const uint8_t *values, size_t elem, uint8_t *dst) {
  uint64_t numel = 1;
  for (uint64_t d : a.shape) numel *= d;
  std::memset(dst, 0, numel * elem);
  const uint64_t nnz = a.values_count;
  for (uint64_t i = 0; i < nnz; ++i) {
    uint64_t pos = 0;
    for (size_t d = 0; d < a.shape.size(); ++d) pos = pos * a.shape[d] + a.coords[d * nnz + i];
    std::memcpy(dst + pos * elem, values + i * elem, elem);
  }
}

CsrArrays LoadedSparse::csr_arrays(const Object &obj) const {
  CsrArrays a;
  a.rows = obj.shape.size() == 2 ? obj.shape[0] : 0;
  a.cols = obj.shape.size() == 2 ? obj.shape[1] : 0;
  a.indices = indices.data();
  a.nnz = indices.size();
  a.indptr = indptr.data();
  a.indptr_count = indptr.size();
  a.values_count = values_count;
  return a;
}

CooArrays LoadedSparse::coo_arrays(const Object &obj) const {
  CooArrays a;
  a.shape = obj.shape.to_vector();
  a.coords = coords.data();
  a.coords_count = coords.size();
  a.values_count = values_count;
  return a;
}

// zt.sparse_csr/1 (spec/profiles/zt.sparse_csr-1.md) adds one data rule
// to 1.2's: within each row the column indices strictly increase.
void check_csr_rows_increasing(const std::string &object, const CsrArrays &a) {
  for (uint64_t r = 0; r < a.rows; ++r)
    for (uint64_t k = a.indptr[r] + 1; k < a.indptr[r + 1]; ++k)
      if (a.indices[k] <= a.indices[k - 1])
        fail(ZT_E_SPARSE_INDEX, where(object, "indices") + ": row " + n(r) + " does not strictly increase (entry " +
                                    n(k - 1) + " is " + n(a.indices[k - 1]) + ", entry " + n(k) + " is " +
                                    n(a.indices[k]) + ")");
}

void check_coo_unique(const std::string &object, const CooArrays &a) {
  const uint64_t nnz = a.values_count;
  std::vector<std::pair<uint64_t, uint64_t>> cells(static_cast<size_t>(nnz));  // (row-major position, element)
  for (uint64_t i = 0; i < nnz; ++i) {
    uint64_t pos = 0;  // < numel, which fits (checked at open)
    for (size_t d = 0; d < a.shape.size(); ++d) pos = pos * a.shape[d] + a.coords[d * nnz + i];
    cells[static_cast<size_t>(i)] = {pos, i};
  }
  std::sort(cells.begin(), cells.end());
  for (size_t k = 1; k < cells.size(); ++k)
    if (cells[k].first == cells[k - 1].first)
      fail(ZT_E_SPARSE_INDEX, where(object, "coords") + ": elements " + n(cells[k - 1].second) + " and " +
                                  n(cells[k].second) + " name the same cell (coordinates must be unique)");
}

namespace {

// sparse_csr (spec 1.2) and zt.sparse_csr/1: the parts read, the index
// rules checked.
LoadedSparse load_csr(const ComponentBytes &reader, const Object &obj) {
  LoadedSparse s;
  s.csr = true;
  s.values = &require_component(obj, "values");
  s.values_count = element_count(reader, obj, *s.values);
  const Component &ind = require_component(obj, "indices");
  const Component &ptr = require_component(obj, "indptr");
  check_sparse_shape(obj);
  s.indptr = read_index_component(reader, obj, ptr, ZT_E_SPARSE_INDPTR);
  s.indices = read_index_component(reader, obj, ind, ZT_E_SPARSE_INDEX);
  check_csr(obj.name, s.csr_arrays(obj));
  return s;
}

// sparse_coo (spec 1.2: nnz is the values' count) and zt.sparse_coo/1
// (nnz_from_coords: the profile derives it from coords).
LoadedSparse load_coo(const ComponentBytes &reader, const Object &obj, bool nnz_from_coords) {
  LoadedSparse s;
  s.values = &require_component(obj, "values");
  if (!nnz_from_coords) s.values_count = element_count(reader, obj, *s.values);
  const Component &co = require_component(obj, "coords");
  check_sparse_shape(obj);
  s.coords = read_index_component(reader, obj, co, ZT_E_SPARSE_INDEX);
  if (nnz_from_coords) s.values_count = s.coords.size() / obj.shape.size();  // exact: checked at open
  check_coo(obj.name, s.coo_arrays(obj));
  return s;
}

// The v2 profiles: data-rule failures are the profile's LayoutData rule.
template <typename Load>
LoadedSparse load_v2(Load load) {
  try {
    return load();
  } catch (const Error &e) {
    const zt_status st = e.status();
    if (st == ZT_E_SPARSE_INDPTR || st == ZT_E_SPARSE_INDEX || st == ZT_E_SPARSE_NNZ)
      fail(st, v2::rejected(v2::Rule::LayoutData, e.what()));
    throw;
  }
}

}  // namespace

bool is_csr_format(const std::string &format) {
  return format == "sparse_csr" || format == kCsrV2;
}

bool is_coo_format(const std::string &format) {
  return format == "sparse_coo" || format == kCooV2;
}

LoadedSparse load_sparse(const ComponentBytes &reader, const Object &obj) {
  if (obj.format == kCsrV2)
    return load_v2([&] {
      LoadedSparse s = load_csr(reader, obj);
      check_csr_rows_increasing(obj.name, s.csr_arrays(obj));
      return s;
    });
  if (obj.format == kCooV2)
    return load_v2([&] {
      LoadedSparse s = load_coo(reader, obj, true);
      check_coo_unique(obj.name, s.coo_arrays(obj));
      return s;
    });
  if (obj.format == "sparse_csr") return load_csr(reader, obj);
  if (obj.format == "sparse_coo") return load_coo(reader, obj, false);
  fail(ZT_E_WRONG_FORMAT, where(obj.name) + ": format is '" + obj.format + "', not sparse_csr or sparse_coo");
}

}  // namespace zt
