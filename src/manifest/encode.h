// Model → CBOR manifest, in the reference writer's key order and omissions
// (interop/README.md): definite lengths, shortest integers, objects sorted
// by name and components by role (bytewise), unknown fields last.
#pragma once

#include <string>

#include "manifest/model.h"

namespace zt {

std::string encode_manifest(const Manifest &m);

}  // namespace zt
