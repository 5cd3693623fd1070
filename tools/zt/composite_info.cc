#include "composite_info.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "cli.h"
#include "terminal_text.h"
#include "ztensor_composite.h"

namespace ztcli {

std::string composite_info_text(const zt_object *obj) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  if (zt_object_get_info(obj, &info) != ZT_OK) return "";
  char line[512];
  if (format_of(info) == "sparse_csr" || format_of(info) == "zt.sparse_csr/1" || format_of(info) == "sparse_coo") {
    zt_sparse_info si{};
    si.struct_size = sizeof si;
    zt_status st = zt_object_sparse_info(obj, &si);
    if (st != ZT_OK) return std::string("  sparse:     ") + zt_status_str(st) + ": " + zt_last_error() + "\n";
    std::snprintf(line, sizeof line, "  sparse:     nnz %" PRIu64 ", density %.6g (%" PRIu64 " of %" PRIu64 ")\n",
                  si.nnz, si.density, si.nnz, si.numel);
    return line;
  }
  if (format_of(info) == "quantized_group") {
    zt_quant_info qi{};
    qi.struct_size = sizeof qi;
    zt_status st = zt_object_quant_info(obj, &qi);
    if (st != ZT_OK) return std::string("  quantized:  ") + zt_status_str(st) + ": " + zt_last_error() + "\n";
    std::snprintf(line, sizeof line,
                  "  quantized:  bits %" PRIu32 ", group_size %" PRIu64 ", packing %s%s, groups %" PRIu64 " (%" PRIu64
                  " rows x %" PRIu64 " cols), zeros %s\n",
                  qi.bits, qi.group_size, qi.packing ? shown(qi.packing).c_str() : "(unknown)",
                  qi.packing_inferred ? " (inferred)" : "", qi.groups, qi.rows, qi.cols, qi.has_zeros ? "yes" : "no");
    return line;
  }
  return "";
}

}  // namespace ztcli
