// Writing a v2 multi-file model (spec §7; `zt split --format 2`): complete
// v2 files, as the v2 writer writes them (the manifest last), become the data
// shards of a new root whose manifest names every object of every file, each
// part pointing into its shard, with the shard table (each shard's exact
// size and whole-file digest, sha256 by default as §6.5 advises).
#pragma once

#include <string>
#include <vector>

#include "ztensor.h"

namespace zt {

struct ShardPiece {
  std::string path;  // a complete v2 file: manifest last, no shard table
  std::string name;  // its shard name (§7.1 characters)
};

// Writes the root at root_path (a new file) and rewrites each piece in place
// as a data shard (§7.2: cut at its manifest, a footer of zeros). The root
// keeps the first piece's file attributes. Each piece is checked first
// (a valid v2 file, its manifest last, no shard table, names unique across
// pieces): nothing is changed unless all pass. alg: ZT_DIGEST_SHA256 or
// ZT_DIGEST_XXH3. sync: fsync every file written.
void make_v2_sharded(const std::vector<ShardPiece> &pieces, zt_digest_alg alg, const std::string &root_path, bool sync);

}  // namespace zt
