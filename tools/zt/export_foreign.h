// zt export --to safetensors|gguf: a whole .zt file as one foreign file.
// Each exporter first checks every object against what its format can hold
// and refuses the file, naming the object and the reason, before anything
// is written; the output then goes through a TempOutput, so a failure never
// leaves a partial file.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "progress.h"
#include "ztensor.h"

namespace ztcli {

// What an exporter needs of one object, checked to be readable and to hold
// exactly one component, "data".
struct ExportObject {
  const zt_object *obj = nullptr;
  std::string name;
  std::string format;
  std::vector<uint64_t> shape;
  size_t data_index = 0;
  zt_component_info data{};
  bool has_attributes = false;
  size_t component_count = 0;
};

// Describes every object of `f` in manifest order; false after a message
// naming the first object that is damaged.
bool export_objects(const char *cmd, const zt_file *f, std::vector<ExportObject> &out);

// "" if the object's only component is "data", else why it cannot be
// exported. Exporters check the format first (the clearer reason).
std::string single_data_problem(const ExportObject &o);

// The file attributes (the JSON of zt_file_attributes_json) as key/value
// pairs. A map with a key starting with '$' comes as {"$map": [[k, v], ...]}
// (so that {"$bytes": ...} is never a map taken for bytes): its text keys
// are unpacked here. False with `why` set when the attributes are not a map
// of text keys; an absent one (null) gives no pairs.
bool attribute_entries(const nlohmann::json &attrs, std::vector<std::pair<std::string, const nlohmann::json *>> &out,
                       std::string &why);

// Writes an object's decoded data to fp in pieces of bounded size (raw data
// read in ranges, zstd data streamed): memory stays bounded whatever the
// object's size. False after a message (rc set to the exit code).
bool write_object_data(const char *cmd, FILE *fp, const ExportObject &o, Progress &progress, int &rc);

int export_safetensors(const zt_file *f, const std::string &out, bool quiet);
int export_gguf(const zt_file *f, const std::string &out, bool quiet);

}  // namespace ztcli
