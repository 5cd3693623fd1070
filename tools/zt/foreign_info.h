// zt info / zt ls on foreign tensor files (.safetensors, .npy, .npz, .gguf):
// the importers' parsers (with their limits) describe the file, and the
// output has the shape it has for a .zt file, so scripts need one parser.
#pragma once

#include <string>

namespace ztcli {

// True for a path zt info/ls should read as a foreign file: a known
// extension, or (any name) the magic bytes of GGUF, .npy or .npz.
bool is_foreign_input(const std::string &path);

int foreign_info(const std::string &path, bool as_json);
int foreign_ls(const std::string &path);

}  // namespace ztcli
