// sparse_csr and sparse_coo: the structural rules (spec 1.2 §3), checked on
// caller arrays before writing and on stored components when verifying
// strictly, and densification into a row-major caller buffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "composite/component_bytes.h"
#include "manifest/model.h"

namespace zt {

// CSR of a rows × cols matrix. Rules, each with its own status:
//   indptr has rows+1 entries, starts at 0, never decreases, ends at nnz
//     (ZT_E_SPARSE_INDPTR); indices has nnz entries and values nnz elements,
//     nnz = number of indices (ZT_E_SPARSE_NNZ); every index < cols
//     (ZT_E_SPARSE_INDEX).
// Duplicate or unsorted column indices within a row are allowed.
struct CsrArrays {
  uint64_t rows = 0, cols = 0;
  const uint64_t *indices = nullptr;
  uint64_t nnz = 0;  // entries in indices
  const uint64_t *indptr = nullptr;
  uint64_t indptr_count = 0;
  uint64_t values_count = 0;
};
void check_csr(const std::string &object, const CsrArrays &a);
// Format v2's zt.sparse_csr/1 also requires each row's indices to strictly
// increase (ZT_E_SPARSE_INDEX).
void check_csr_rows_increasing(const std::string &object, const CsrArrays &a);

// The layout id of a v2 CSR object (its format as written), read through the
// same composite API as 1.2's "sparse_csr".
constexpr const char *kCsrV2 = "zt.sparse_csr/1";
bool is_csr_format(const std::string &format);
// And of a v2 COO object: "sparse_coo" or "zt.sparse_coo/1".
constexpr const char *kCooV2 = "zt.sparse_coo/1";
bool is_coo_format(const std::string &format);

// COO with coordinates in Structure-of-Arrays order (all dim-0 indices, then
// all dim-1, ...). Rules: coords has ndim × nnz entries with nnz = number of
// values (ZT_E_SPARSE_NNZ); coordinate d of each entry < shape[d]
// (ZT_E_SPARSE_INDEX).
struct CooArrays {
  std::vector<uint64_t> shape;
  const uint64_t *coords = nullptr;
  uint64_t coords_count = 0;
  uint64_t values_count = 0;
};
void check_coo(const std::string &object, const CooArrays &a);
// zt.sparse_coo/1 (spec/profiles/zt.sparse_coo-1.md) also requires the
// coordinates to be unique: no two elements name one cell
// (ZT_E_SPARSE_INDEX). O(nnz log nnz); the arrays passed check_coo.
void check_coo_unique(const std::string &object, const CooArrays &a);

// Shape rules: CSR needs 2 dimensions, COO at least 1 (ZT_E_SHAPE).
void check_sparse_shape(const Object &obj);

// Writes the dense row-major tensor: zero bytes everywhere, then each stored
// value in storage order, so a duplicate position takes the LAST value
// (last-wins). elem = bytes per value; dst holds numel × elem bytes. The
// arrays must have passed check_csr / check_coo.
void densify_csr(const CsrArrays &a, const uint8_t *values, size_t elem, uint8_t *dst);
void densify_coo(const CooArrays &a, const uint8_t *values, size_t elem, uint8_t *dst);

// A stored sparse object with its index arrays read (as u64) and checked.
struct LoadedSparse {
  const Component *values = nullptr;
  uint64_t values_count = 0;              // logical elements (decoded to count if need be)
  std::vector<uint64_t> indices, indptr;  // CSR
  std::vector<uint64_t> coords;           // COO
  bool csr = false;
  CsrArrays csr_arrays(const Object &obj) const;
  CooArrays coo_arrays(const Object &obj) const;
};
// ZT_E_WRONG_FORMAT for other formats; every rule above for these.
LoadedSparse load_sparse(const ComponentBytes &reader, const Object &obj);

}  // namespace zt
