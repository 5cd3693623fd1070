// `zt info` lines for composite objects: nnz and density of sparse objects,
// the parameters of quantized ones (through ztensor_composite.h).
#pragma once

#include <string>

#include "ztensor.h"

namespace ztcli {

// One indented line per fact ("  sparse:     nnz 6, density 0.3 ..."), or ""
// for other formats. Problems found are shown on the line, not fatal.
std::string composite_info_text(const zt_object *obj);

}  // namespace ztcli
