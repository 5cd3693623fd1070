#include "composite/validate.h"

#include "reader.h"
#include "util/error.h"

namespace zt {

void validate_object_structure(const Reader &, const Object &obj) {
  auto require = [&](std::initializer_list<const char *> roles) {
    for (const char *r : roles) {
      bool found = false;
      for (const auto &c : obj.components) found |= c.role == r;
      if (!found)
        fail(ZT_E_COMPONENT_MISSING, where(obj.name) + ": " + obj.format + " object has no '" + r + "' component");
    }
  };
  if (obj.format == "dense") require({"data"});
  else if (obj.format == "sparse_csr") require({"values", "indices", "indptr"});
  else if (obj.format == "sparse_coo") require({"values", "coords"});
  else if (obj.format == "quantized_group") require({"packed_weight", "scales"});
}

}  // namespace zt
