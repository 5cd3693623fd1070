// The whole manifest model as one JSON document (for `zt info --json` and
// zt_file_to_json): version, attributes, objects with their components,
// each with its status.
#pragma once

#include <string>

#include "manifest/model.h"

namespace zt {

std::string manifest_to_json(const Manifest &m);

}  // namespace zt
