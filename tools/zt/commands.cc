#include "cli.h"
#include "commands.h"

namespace ztcli {

const std::vector<Command> &commands() {
  static const std::vector<Command> table = {
      {"info", "describe a file: version, attributes, objects, components", kInfoUsage, cmd_info},
      {"ls", "list objects, one line each", kLsUsage, cmd_ls},
      {"verify", "check every structural rule and digest", kVerifyUsage, cmd_verify},
      {"cat", "write a component's decoded bytes to stdout", kCatUsage, cmd_cat},
      {"migrate", "rewrite any readable file as spec 1.2.0", kMigrateUsage, cmd_migrate},
  };
  return table;
}

}  // namespace ztcli
