// The index of a sharded safetensors checkpoint (model.safetensors.index.json:
// {"metadata": {...}, "weight_map": {tensor: shard file}}), read with the
// care of any foreign input: bounded size and nesting, no repeated key, and
// shard locations that stay inside the index's folder (the rules of
// docs/sharding.md, which zt_open_set applies to .zt sets).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "import.h"
#include "util/regular_file.h"

namespace ztimport {
namespace {

using json = nlohmann::json;

std::string read_text(const std::string &path, uint64_t limit) {
  struct stat st;
  const char *kind = nullptr;
  const int fd = zt::open_regular_file(AT_FDCWD, path.c_str(), 0, &st, &kind);
  if (fd < 0 && kind) throw InputError("'" + path + "' is " + kind + ", not a regular file");
  if (fd < 0) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  if (static_cast<uint64_t>(st.st_size) > limit) {
    ::close(fd);
    throw InputError("'" + path + "': " + std::to_string(st.st_size) + " bytes exceed the index limit of " +
                     std::to_string(limit));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw InputError("'" + path + "': read failed");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return text;
}

}  // namespace

void check_shard_location(const std::string &loc, const std::string &ctx) {
  auto bad = [&](const std::string &why) {
    throw InputError(ctx + ": shard location '" + loc + "' " + why +
                     " (rule: shard locations are relative paths inside the index's folder)");
  };
  if (loc.empty()) bad("is empty");
  if (loc.find('\0') != std::string::npos) bad("contains a NUL byte");
  if (loc.find('\\') != std::string::npos) bad("contains a backslash");
  if (loc.front() == '/') bad("is absolute");
  if (loc.find(':') != std::string::npos) bad("has a URL scheme or drive");
  size_t start = 0;
  while (true) {
    const size_t slash = loc.find('/', start);
    const std::string part = loc.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty()) bad("has an empty path component");
    if (part == "." || part == "..") bad("has a '" + part + "' path component");
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

ShardIndexFile read_shard_index(const std::string &path, const Limits &limits) {
  const std::string text = read_text(path, limits.max_header);
  check_json_depth(text.data(), text.size(), path);
  std::vector<std::set<std::string>> open;  // keys of each open JSON object
  std::string duplicate;
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json &parsed) {
    if (ev == json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (ev == json::parse_event_t::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (ev == json::parse_event_t::key && !open.empty()) {
      if (!open.back().insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json root = json::parse(text, cb, /*allow_exceptions=*/false);
  if (root.is_discarded()) throw InputError("'" + path + "': the index is not valid JSON");
  if (!duplicate.empty()) throw InputError("'" + path + "': key '" + duplicate + "' appears twice in one object");
  if (!root.is_object()) throw InputError("'" + path + "': the index is not a JSON object");
  ShardIndexFile r;
  if (root.contains("metadata") && !root["metadata"].is_null()) {
    if (!root["metadata"].is_object()) throw InputError("'" + path + "': \"metadata\" is not a JSON object");
    r.metadata = root["metadata"];
  }
  if (!root.contains("weight_map") || !root["weight_map"].is_object())
    throw InputError("'" + path + "': \"weight_map\" is missing or not a JSON object");
  std::set<std::string> checked;
  for (auto it = root["weight_map"].begin(); it != root["weight_map"].end(); ++it) {
    const std::string ctx = "'" + path + "': tensor '" + it.key() + "'";
    if (!it.value().is_string()) throw InputError(ctx + ": its shard is not a JSON string");
    const std::string &loc = it.value().get_ref<const std::string &>();
    if (checked.insert(loc).second) check_shard_location(loc, ctx);
    r.weight_map.emplace_back(it.key(), loc);
  }
  return r;
}

}  // namespace ztimport
