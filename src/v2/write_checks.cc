#include "v2/write_checks.h"

#include "manifest/model.h"
#include "v2/vocab.h"

namespace zt::v2 {

void check_layout_before_write(const std::string &name, const std::string &layout, const std::vector<uint64_t> &shape,
                               uint64_t numel, const std::string &attributes, const std::vector<PartFacts> &parts) {
  const LayoutDef *def = find_layout(layout);
  if (!def) return;
  // The object as the reader maps it (v2/manifest.cc): what the validators read.
  Object o;
  o.name = name;
  o.has_format = true;
  o.format = layout;
  for (uint64_t d : shape) o.shape.push_back(d);
  o.numel = numel;
  o.has_attributes = !attributes.empty();
  o.attributes = attributes;
  for (const PartFacts &p : parts) {
    Component c;
    c.role = p.name;
    c.dtype = storage_dtype(p.dtype);
    c.dtype_name = p.dtype;
    c.has_type = !p.type.empty();
    c.logical_type = p.type;
    c.decoded_length = p.decoded_length;
    c.length = p.decoded_length;
    o.components.push_back(std::move(c));
  }
  // Every profile is enforced here, also those a reader refuses per object
  // only (LayoutDef::object_only): a writer has no reason to make one.
  def->validate(o, "cannot write ");
}

}  // namespace zt::v2
