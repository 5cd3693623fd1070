#include "composite/validate.h"

#include "composite/parts.h"
#include "composite/quantized.h"
#include "composite/sparse.h"
#include "util/error.h"

namespace zt {

void validate_object_structure(const ComponentBytes &reader, const Object &obj) {
  if (obj.format == "dense") {
    require_component(obj, "data");
  } else if (is_csr_format(obj.format) || is_coo_format(obj.format)) {
    load_sparse(reader, obj);
  } else if (obj.format == "quantized_group") {
    describe_quantized(obj, &reader);
  }
}

}  // namespace zt
