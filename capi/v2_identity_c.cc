// Model identity for format v2 (spec §6.3, §6.4): the content digest and
// the canonical-form check. The rules live in src/v2/; this is the ABI.
#include <cstring>

#include "container/layout.h"
#include "handles.h"
#include "reader.h"
#include "v2/canonical.h"
#include "v2/content_digest.h"

using namespace zt;
using namespace zt::capi;

extern "C" {

ZT_API zt_status zt_file_content_digest(const zt_file *file, zt_digest_alg alg, char *dst, size_t dst_capacity,
                                        size_t *out_len) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_content_digest");
    if (!out_len) invalid("zt_file_content_digest: out_len is NULL");
    if (!dst && dst_capacity) invalid("zt_file_content_digest: dst is NULL with a capacity");
    const std::string d = v2::content_digest(f.reader->manifest(), alg);
    *out_len = d.size();
    if (!dst && dst_capacity == 0) return ZT_OK;
    if (dst_capacity < d.size() + 1)
      fail(ZT_E_BUFFER_TOO_SMALL, "zt_file_content_digest: needs " + std::to_string(d.size() + 1) +
                                      " bytes with the NUL, capacity is " + std::to_string(dst_capacity));
    std::memcpy(dst, d.c_str(), d.size() + 1);
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_canonical(const zt_file *file, uint32_t *out_rule, char **out_message) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_canonical");
    if (!out_rule) invalid("zt_file_canonical: out_rule is NULL");
    *out_rule = 0;
    if (out_message) *out_message = nullptr;
    const Manifest &m = f.reader->manifest();
    if (m.spec != SpecVersion::V2)
      fail(ZT_E_WRONG_FORMAT, "zt_file_canonical: canonical form is defined for zTensor v2 files only (spec §6.3)");
    const Source &src = f.reader->source();
    const ManifestLocation loc = locate_manifest(src, f.reader->options().max_manifest_size);
    const auto bad = v2::canonical_violations(m, v2::Placement{loc.offset, loc.size, src.size()});
    if (bad.empty()) return ZT_OK;
    std::string text;
    for (const auto &v : bad) {
      if (!text.empty()) text += "; ";
      text += v.text;
    }
    if (out_message) *out_message = dup_string(text);
    *out_rule = bad.front().rule;
    return ZT_OK;
  });
}

}  // extern "C"
