// Structure checks for composite object formats (sparse_csr, sparse_coo,
// quantized_group): used by strict verification and before writing.
#pragma once

#include "manifest/model.h"

namespace zt {

class Reader;

// Throws zt::Error with the format-specific status (ZT_E_SPARSE_*,
// ZT_E_QUANT_*, ZT_E_COMPONENT_MISSING) naming the object, the component and
// the first bad position. Objects of other formats pass.
void validate_object_structure(const Reader &reader, const Object &obj);

}  // namespace zt
