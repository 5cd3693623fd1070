// zt — inspect, check, convert and maintain zTensor files.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"

using namespace ztcli;

static void print_help() {
  std::printf("zt %s — inspect, check, convert and maintain zTensor (.zt) files\n\n", zt_version_string());
  std::printf("usage: zt COMMAND [ARGS...]\n\ncommands:\n");
  for (const auto &c : commands()) std::printf("  %-11s %s\n", c.name, c.summary);
  std::printf(
      "\n'zt COMMAND --help' describes a command.\n\n"
      "exit codes:\n"
      "  0  success\n"
      "  1  the file is invalid, or the operation failed (message on stderr)\n"
      "  2  usage error (unknown command or option, missing argument)\n"
      "  3  I/O error (cannot open, read, write or rename a file)\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help();
    return kUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    print_help();
    return kOk;
  }
  if (cmd == "--version" || cmd == "version") {
    std::printf("zt %s (format %s)\n", zt_version_string(), ZT_FORMAT_VERSION);
    return kOk;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto &c : commands()) {
    if (cmd == c.name) {
      if (wants_help(args)) {
        std::printf("%s", c.usage);
        return kOk;
      }
      return c.run(args);
    }
  }
  std::fprintf(stderr, "zt: unknown command '%s' (see 'zt --help')\n", cmd.c_str());
  return kUsage;
}
