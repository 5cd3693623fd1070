// Helpers shared by the composite formats: finding a component by role,
// element counts, and index arrays (indices, indptr, coords) read as u64
// from any integer dtype (spec 1.1 allowed any; 1.2 writes u64).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "composite/component_bytes.h"
#include "manifest/model.h"

namespace zt {

// The component with that role, or nullptr.
const Component *find_component(const Object &obj, const std::string &role);
// Like find_component, but ZT_E_COMPONENT_MISSING when absent.
const Component &require_component(const Object &obj, const std::string &role);

// Logical elements a component holds: decoded bytes / (dtype size × ratio).
// 0 for a zstd component whose decoded size is not declared (spec 1.1 has no
// uncompressed_length): use the ComponentBytes overload, which decodes to count.
uint64_t element_count(const Component &c);
// The same for any component; one of unknown decoded size is decoded.
uint64_t element_count(const ComponentBytes &reader, const Object &obj, const Component &c);
// Bytes of one logical element (dtype size × ratio).
uint64_t element_bytes(const Component &c);

// Whether `role` is an index component of a sparse format (indices and
// indptr of sparse_csr, coords of sparse_coo): u64 in spec 1.2 §3.
bool is_sparse_index(const std::string &format, const std::string &role);

// Reads an index component as u64. ZT_E_INDEX_DTYPE if its dtype is not an
// integer; a negative entry (signed dtypes) fails with `negative_status`.
std::vector<uint64_t> read_index_component(const ComponentBytes &reader, const Object &obj, const Component &c,
                                           zt_status negative_status);

// Converts host-order integers of `dtype` to u64 (same rules). `first` is
// the position of data's first entry in the component, for messages.
std::vector<uint64_t> index_bytes_to_u64(const uint8_t *data, size_t bytes, zt_dtype dtype, const std::string &ctx,
                                         zt_status negative_status, uint64_t first = 0);

}  // namespace zt
