#include "cli.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "progress.h"
#include "terminal_text.h"
#include "util/redact_url.h"

namespace ztcli {

int report(const std::string &what, zt_status st) {
  // `what` may name objects or components of the file: escaped for the
  // terminal, as the library's own detail already is.
  std::fprintf(stderr, "zt: %s: %s\n", shown(what).c_str(), zt_status_str(st));
  const char *detail = zt_last_error();
  if (detail && *detail) std::fprintf(stderr, "  %s\n", shown(detail).c_str());
  return st == ZT_E_IO ? kIo : kFailure;
}

int refuse_read_options(const char *cmd) {
  // zt_migrate opens IN itself, mapped, with the library's default limits:
  // an option it would silently ignore is refused instead.
  const char *opt = read_options().pread_given        ? "--pread"
                    : read_options().max_decoded_size ? "--max-decoded-size"
                                                      : nullptr;
  if (!opt) return kOk;
  std::fprintf(stderr,
               "zt %s: %s does not apply to '%s', which reads its input with the library's defaults (memory map, "
               "64 GiB per component); use --max-total-decoded to bound what it decodes\n",
               cmd, opt, cmd);
  return kUsage;
}

ReadOptions &read_options() {
  static ReadOptions o;
  return o;
}

bool is_url(const std::string &path) {
  return zt::is_remote_url(path);
}

int refuse_url(const char *cmd, const char *role, const std::string &path) {
  if (!zt::looks_like_url(path)) return kOk;  // any scheme: ftp://, file://, ...
  std::fprintf(stderr, "zt %s: the %s '%s' is a URL, and zt %s works on local files only (nothing done)\n", cmd, role,
               shown(display_path(path)).c_str(), cmd);
  return kUsage;
}

void fill_url_options(zt_url_options &u) {
  zt_url_options_init(&u);
  const ReadOptions &o = read_options();
  if (!o.bearer_token.empty()) u.bearer_token = o.bearer_token.c_str();
  u.timeout_ms = o.timeout_ms;
  u.retries = o.retries;
  u.low_speed_bytes = o.low_speed_bytes;
  u.low_speed_time_ms = o.low_speed_time_ms;
  u.deadline_ms = o.deadline_ms;
}

std::string display_path(const std::string &path) {
  return zt::redact_url_text(path);
}

int open_input(const std::string &path, ztensor::File &out, const std::string &what) {
  zt_open_options opts;
  zt_open_options_init(&opts);
  if (read_options().pread) opts.access = ZT_ACCESS_PREAD;
  if (read_options().max_decoded_size) opts.max_decoded_size = read_options().max_decoded_size;
  if (read_options().verify) opts.verify_on_read = 1;
  zt_file *f = nullptr;
  zt_status st;
  if (is_url(path)) {
    zt_url_options uopts;
    fill_url_options(uopts);
    st = zt_open_url(path.c_str(), &uopts, &opts, &f);
  } else {
    st = zt_open(path.c_str(), &opts, &f);
  }
  if (st != ZT_OK) return report(what.empty() ? "cannot open '" + display_path(path) + "'" : what, st);
  out = ztensor::File::adopt(f);
  return kOk;
}

bool FileStreamSink::write(void *user, const void *data, size_t len) {
  auto *s = static_cast<FileStreamSink *>(user);
  if (std::fwrite(data, 1, len, s->fp) != len) {
    s->failed = true;
    return false;
  }
  s->progress->add(len);
  return true;
}

int stream_component(const zt_object *o, size_t index, const std::string &what,
                     bool (*fn)(void *user, const void *data, size_t len), void *user) {
  zt_component_stream *s = nullptr;
  zt_status st = zt_component_stream_open(o, index, &s);
  if (st != ZT_OK) return report(what, st);
  const ztensor::Object::Stream owner(s);  // closes s
  std::vector<uint8_t> buf(size_t{8} << 20);
  for (;;) {
    size_t n = 0;
    st = zt_component_stream_read(s, buf.data(), buf.size(), &n);
    if (st != ZT_OK) return report(what, st);
    if (n == 0) return kOk;
    if (!fn(user, buf.data(), n)) return kIo;
  }
}

bool is_set_index(const std::string &path) {
  const std::string p = is_url(path) ? path.substr(0, path.find_first_of("?#")) : path;
  return p.size() >= 5 && p.compare(p.size() - 5, 5, ".json") == 0;
}

int open_set_input(const std::string &path, ztensor::Set &out, const std::string &what) {
  zt_open_options opts;
  zt_open_options_init(&opts);
  if (read_options().pread) opts.access = ZT_ACCESS_PREAD;
  if (read_options().max_decoded_size) opts.max_decoded_size = read_options().max_decoded_size;
  zt_set *s = nullptr;
  zt_status st;
  if (is_url(path)) {
    zt_url_options uopts;
    fill_url_options(uopts);
    st = zt_open_set_url(path.c_str(), &uopts, &opts, &s);
  } else {
    st = zt_open_set(path.c_str(), &opts, &s);
  }
  if (st != ZT_OK) return report(what.empty() ? "cannot open set '" + display_path(path) + "'" : what, st);
  out = ztensor::Set::adopt(s);
  return kOk;
}

std::vector<std::string> shard_paths(const std::string &index, const zt_set *set) {
  const size_t slash = index.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : index.substr(0, slash + 1);
  size_t n = 0;
  zt_set_shard_count(set, &n);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const char *loc = nullptr;
    if (zt_set_shard_at(set, i, nullptr, &loc) == ZT_OK) out.push_back(dir + loc);
  }
  return out;
}

bool parse_byte_size(const std::string &s, uint64_t &out) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0) return false;
  if (i < s.size() && s[i] == ' ') ++i;
  std::string unit;
  for (; i < s.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  static const std::pair<const char *, uint64_t> kUnits[] = {
      {"", 1},
      {"b", 1},
      {"kb", 1000},
      {"mb", 1000000},
      {"gb", 1000000000},
      {"tb", 1000000000000},
      {"kib", uint64_t{1} << 10},
      {"mib", uint64_t{1} << 20},
      {"gib", uint64_t{1} << 30},
      {"tib", uint64_t{1} << 40},
  };
  for (const auto &[name, mult] : kUnits) {
    if (unit != name) continue;
    if (v == 0 || v > UINT64_MAX / mult) return false;
    out = v * mult;
    return true;
  }
  return false;
}

int usage_error(const std::string &cmd, const std::string &msg) {
  std::fprintf(stderr, "zt %s: %s\n(see 'zt %s --help')\n", cmd.c_str(), msg.c_str(), cmd.c_str());
  return kUsage;
}

bool wants_help(const std::vector<std::string> &args) {
  return std::any_of(args.begin(), args.end(), [](const std::string &a) { return a == "-h" || a == "--help"; });
}

bool Args::has(const std::string &name) const {
  for (const auto &o : options)
    if (o.first == name) return true;
  return false;
}

std::string Args::get(const std::string &name, const std::string &def) const {
  for (auto it = options.rbegin(); it != options.rend(); ++it)
    if (it->first == name) return it->second;
  return def;
}

bool parse_args(const std::vector<std::string> &in, const std::vector<std::string> &flags,
                const std::vector<std::string> &with_value, Args &out, std::string &err) {
  bool only_positional = false;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string &a = in[i];
    if (only_positional || a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    std::string name = a, value;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    if (std::find(flags.begin(), flags.end(), name) != flags.end() && eq == std::string::npos) {
      out.options.emplace_back(name, "");
    } else if (std::find(with_value.begin(), with_value.end(), name) != with_value.end()) {
      if (eq == std::string::npos) {
        if (i + 1 >= in.size()) {
          err = "option " + name + " needs a value";
          return false;
        }
        value = in[++i];
      }
      out.options.emplace_back(name, value);
    } else {
      err = "unknown option " + a;
      return false;
    }
  }
  return true;
}

std::string shape_string(const uint64_t *shape, size_t ndim) {
  std::string s = "[";
  for (size_t i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string human_bytes(uint64_t n) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

zt_object_info object_info(const zt_object *o) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  if (zt_object_get_info(o, &info) != ZT_OK) {
    info = zt_object_info{};
    info.name = info.format = "";
  }
  return info;
}

zt_component_info component_info(const zt_object *o, size_t index) {
  zt_component_info c{};
  c.struct_size = sizeof c;
  if (zt_object_component(o, index, &c) != ZT_OK) c = zt_component_info{};
  return c;
}

uint64_t stored_bytes(const zt_object *o) {
  uint64_t n = 0;
  const zt_object_info info = object_info(o);
  for (size_t k = 0; k < info.component_count; ++k) n += component_info(o, k).length;
  return n;
}

bool parse_digest(const std::string &s, uint32_t &alg) {
  if (s == "none")
    alg = ZT_DIGEST_NONE;
  else if (s == "crc32c")
    alg = ZT_DIGEST_CRC32C;
  else if (s == "sha256")
    alg = ZT_DIGEST_SHA256;
  else
    return false;
  return true;
}

const char *const kFormatOption = "--format";
const char *const kNoCanonicalFlag = "--no-canonical";

bool parse_format(const Args &a, uint32_t &format, uint32_t &canonical, std::string &err, const char *option) {
  format = 1;
  canonical = 1;
  if (a.has(option)) {
    const std::string v = a.get(option);
    if (v == "1" || v == "1.2")
      format = 1;
    else if (v == "2")
      format = 2;
    else {
      err = std::string(option) + " takes 1.2 or 2";
      return false;
    }
  }
  if (a.has(kNoCanonicalFlag)) {
    if (format != 2) {
      err = std::string(kNoCanonicalFlag) + " applies to v2 only (" + option + " 2)";
      return false;
    }
    canonical = 0;
  }
  return true;
}

bool parse_zstd_level(const std::string &s, int32_t &level) {
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || !end || *end || v < -131072 || v > 22) return false;
  level = static_cast<int32_t>(v);
  return true;
}

}  // namespace ztcli
