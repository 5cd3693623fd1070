#include "migrate/sparse_to_v2.h"

#include "composite/sparse.h"
#include "reader.h"
#include "util/error.h"
#include "v2/rule.h"
#include "writer.h"

namespace zt {

void check_sparse_data_for_v2(const Reader &in, const Object &o, const Writer &w) {
  if (!w.writes_v2()) return;
  const bool csr = is_csr_format(o.format);
  if (!csr && !is_coo_format(o.format)) return;
  const LoadedSparse s = load_sparse(in, o);  // the 1.2 rules (bounds, counts)
  try {
    if (csr)
      check_csr_rows_increasing(o.name, s.csr_arrays(o));
    else
      check_coo_unique(o.name, s.coo_arrays(o));
  } catch (const Error &e) {
    fail(e.status(), v2::rejected(v2::Rule::LayoutData, std::string("cannot write as ") + (csr ? kCsrV2 : kCooV2) +
                                                            " (a spec 1.2 object may, v2 may not): " + e.what()));
  }
}

}  // namespace zt
