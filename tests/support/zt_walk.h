// Walking every object and component of an open file through the C API.
#pragma once

#include "ztensor.h"

namespace zttest {

inline zt_object_info object_info(const zt_object *o) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  zt_object_get_info(o, &info);
  return info;
}

inline zt_component_info component_info(const zt_object *o, size_t k) {
  zt_component_info c{};
  c.struct_size = sizeof c;
  zt_object_component(o, k, &c);
  return c;
}

// fn(const zt_object *o, const zt_object_info &info, size_t k, const zt_component_info &c)
template <typename F>
void for_each_component(const zt_file *f, F fn) {
  size_t count = 0;
  zt_file_object_count(f, &count);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(f, i, &o);
    zt_object_info info = object_info(o);
    for (size_t k = 0; k < info.component_count; ++k) fn(o, info, k, component_info(o, k));
  }
}

}  // namespace zttest
