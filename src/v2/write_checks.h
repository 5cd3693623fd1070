// The layout profiles' metadata rules, checked by the v2 writer before it
// writes a manifest: the same validators the reader runs at open
// (v2/vocab.h find_layout, v2/layout_profiles.*), over the object as it
// would be written, so the writer never produces an object a reader
// refuses. Dense objects' size equation is checked as each part arrives
// (v2_writer.cc); this covers zt.sparse_csr/1, zt.sparse_coo/1,
// zt.quant_group/1, zt.mx/1 and gguf.<type>/1 (parts, dtypes, attributes,
// sizes). Unknown layouts are the caller's to define and pass unchecked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zt::v2 {

struct PartFacts {
  std::string name;
  std::string dtype;  // v2 storage dtype name
  std::string type;   // logical type, "" = none
  uint64_t decoded_length = 0;
};

// Throws the reader's rejection (ZT_E_* of the rule; the message names the
// object, the part where there is one, and the rule: "rejected
// (LayoutRule): cannot write object 'x': zt.mx/1 requires ...").
void check_layout_before_write(const std::string &name, const std::string &layout, const std::vector<uint64_t> &shape,
                               uint64_t numel, const std::string &attributes, const std::vector<PartFacts> &parts);

}  // namespace zt::v2
