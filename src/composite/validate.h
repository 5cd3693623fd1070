// Structure checks for composite object formats (sparse_csr, sparse_coo,
// quantized_group): used by strict verification (Reader::verify_object /
// verify_all) and by zt_object_validate. The rules and their statuses are
// listed in sparse.h and quantized.h.
#pragma once

#include "composite/component_bytes.h"
#include "manifest/model.h"

namespace zt {

// Throws zt::Error with the format-specific status (ZT_E_SPARSE_*,
// ZT_E_QUANT_*, ZT_E_COMPONENT_MISSING, ZT_E_INDEX_DTYPE, ZT_E_SHAPE) naming
// the object, the component and the first bad position. Dense objects need a
// "data" component; objects of other (unknown) formats pass. The components
// involved must be readable (verified) before this is called.
void validate_object_structure(const ComponentBytes &reader, const Object &obj);

}  // namespace zt
