// One entry point per `zt` command; each is defined in cmd_<name>.cc.
#pragma once

#include <string>
#include <vector>

namespace ztcli {

int cmd_info(const std::vector<std::string> &args);
int cmd_ls(const std::vector<std::string> &args);
int cmd_verify(const std::vector<std::string> &args);
int cmd_cat(const std::vector<std::string> &args);
int cmd_migrate(const std::vector<std::string> &args);
int cmd_export(const std::vector<std::string> &args);
int cmd_convert(const std::vector<std::string> &args);
int cmd_compress(const std::vector<std::string> &args);
int cmd_decompress(const std::vector<std::string> &args);
int cmd_append(const std::vector<std::string> &args);
int cmd_remove(const std::vector<std::string> &args);
int cmd_merge(const std::vector<std::string> &args);
int cmd_split(const std::vector<std::string> &args);

extern const char *const kInfoUsage;
extern const char *const kLsUsage;
extern const char *const kVerifyUsage;
extern const char *const kCatUsage;
extern const char *const kMigrateUsage;
extern const char *const kExportUsage;
extern const char *const kConvertUsage;
extern const char *const kCompressUsage;
extern const char *const kDecompressUsage;
extern const char *const kAppendUsage;
extern const char *const kRemoveUsage;
extern const char *const kMergeUsage;
extern const char *const kSplitUsage;

}  // namespace ztcli
