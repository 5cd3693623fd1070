// --max-total-decoded: one budget of decoded zstd bytes per command, over
// all of its inputs (every file, every shard of a set), counted before
// anything is decoded, as what the command will decode.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ztensor.h"

namespace ztcli {

class DecodeBudget {
 public:
  // How components count:
  //  - EachBlobOnce (zt verify): a blob shared by several objects is decoded
  //    once (the library verifies each distinct blob once), so it counts
  //    once, at the largest size any of its objects declares.
  //  - EachWrite (rewrites and exports): every component is decoded for each
  //    object written, so a blob shared by n objects counts n times.
  enum class Count { EachBlobOnce, EachWrite };

  DecodeBudget(std::string cmd, Count mode);

  // Adds the zstd components of `objects` (all of file `f`). kOk while the
  // running total is within --max-total-decoded (or no budget is set);
  // otherwise prints why, naming `what`, and returns kFailure.
  int add(const zt_file *f, const std::vector<const zt_object *> &objects, const std::string &what);
  // The same for every object of `f`.
  int add_file(const zt_file *f, const std::string &what);

 private:
  std::string cmd_;
  Count mode_;
  uint64_t budget_;
  uint64_t total_ = 0;
  // EachBlobOnce: (file, offset, length) → the size counted for that blob.
  std::map<std::tuple<const zt_file *, uint64_t, uint64_t>, uint64_t> blobs_;
};

// For a command that rewrites the file at `path` whole (migrate, compress,
// decompress): opens it and counts every object's components (EachWrite).
int check_rewrite_budget(const char *cmd, const std::string &path);

// All objects of an open file, in manifest order.
std::vector<const zt_object *> objects_of(const zt_file *f);

}  // namespace ztcli
