#include "commands.h"

#include "cli.h"

namespace ztcli {

const std::vector<Command> &commands() {
  static const std::vector<Command> table = {
      {"info", "describe a file: version, attributes, objects, components", kInfoUsage, cmd_info},
      {"ls", "list objects, one line each", kLsUsage, cmd_ls},
      {"verify", "check every structural rule and digest", kVerifyUsage, cmd_verify},
      {"cat", "write a component's decoded bytes to stdout", kCatUsage, cmd_cat},
      {"migrate", "rewrite any readable file as spec 1.2.0", kMigrateUsage, cmd_migrate},
      {"export", "write a dense object as .npy, or the whole file as safetensors or GGUF", kExportUsage, cmd_export},
      {"convert", "convert .safetensors, .npy, .npz, .gguf files to one .zt", kConvertUsage, cmd_convert},
      {"compress", "rewrite a file with every component zstd-compressed", kCompressUsage, cmd_compress},
      {"decompress", "rewrite a file with every component raw", kDecompressUsage, cmd_decompress},
      {"append", "add the objects of another .zt file (atomic rewrite)", kAppendUsage, cmd_append},
      {"remove", "remove objects from a file (atomic rewrite)", kRemoveUsage, cmd_remove},
      {"merge", "merge .zt files and sharded sets into one file", kMergeUsage, cmd_merge},
      {"split", "split a .zt file into shards of bounded size plus an index", kSplitUsage, cmd_split},
  };
  return table;
}

}  // namespace ztcli
