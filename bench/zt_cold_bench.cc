// zt_cold_bench: loads from a cold page cache (issue 26), against reading
// the same cold file sequentially, in the same run. Every timed load runs in
// a fresh process (as the first load after a boot or a download does), and
// before each one the file leaves the page cache:
//   --evict drop     sync; echo 3 > /proc/sys/vm/drop_caches (needs root;
//                    the default when root)
//   --evict fadvise  fdatasync + posix_fadvise(DONTNEED) on the file (no
//                    root; the file was written by this run, so it is clean)
// Each child reports its time and the bytes it made the disk read
// (/proc/self/io read_bytes), so a load that was not cold shows.
// Rounds are interleaved (every mode once per round, the order rotated);
// the table gives medians, the spread and the ratio of medians.
// Usage:
//   zt_cold_bench [--dir D] [--rounds N] [--evict drop|fadvise] [--only W]
//                 [--python SCRIPT] [--no-warm] [--keep] [--before LIBDIR]
//   zt_cold_bench --child MODE FILE BYTES   one load (the modes of label();
//                                           BYTES: the tensors' total)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <map>

#include "bench_util.h"
#include "original_reader.h"
#include "workloads.h"

using namespace bench;

namespace {

struct Config {
  std::string dir = "/tmp/zt-bench";
  int rounds = 5;
  std::string evict;  // "drop" or "fadvise"
  std::string only;
  std::string python;  // bench/python_cold_child.py: Python rows when set
  bool warm = true;
  bool keep = false;  // leave the files in --dir (to study one load alone)
  // --before DIR: a build of the library before a change (DIR holds its
  // libztensor.so.N): its rows run the same children with LD_LIBRARY_PATH=DIR
  // (this program's RUNPATH yields to it), interleaved with the others.
  std::string before;
};

// ---- the children: one load each, prints "<seconds> <disk bytes read>" ----

uint64_t disk_read_bytes() {
  FILE *f = std::fopen("/proc/self/io", "r");
  if (!f) return 0;
  char line[128];
  unsigned long long v = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "read_bytes: %llu", &v) == 1) break;
  std::fclose(f);
  return v;
}

// cat: read(2) in 1 MiB blocks into one reused buffer; with `into`, the
// blocks go one after the other into that buffer (the file's size).
uint64_t sequential_read(const std::string &path, uint8_t *into = nullptr) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open " + path);
  static uint8_t block[1 << 20];
  uint64_t total = 0;
  for (ssize_t r; (r = ::read(fd, into ? into + total : block, sizeof block)) != 0; total += static_cast<uint64_t>(r))
    if (r < 0) die("read failed on " + path);
  ::close(fd);
  return total;
}

// O_DIRECT in 1 MiB blocks (no page cache, no readahead); -1 where the
// filesystem refuses it.
int64_t direct_read(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (fd < 0) return -1;
  const size_t n = size_t{1} << 20;
  void *buf = nullptr;
  if (::posix_memalign(&buf, 4096, n) != 0) die("out of memory");
  int64_t total = 0;
  for (ssize_t r; (r = ::pread(fd, buf, n, total)) != 0; total += r) {
    if (r < 0) {
      total = -1;
      break;
    }
  }
  std::free(buf);
  ::close(fd);
  return total;
}

// Default options (mapped), or with the `prefetch` option: the file's data
// read into the page cache in the background from the open on.
// Without it no option struct is made: --before runs this binary against
// a library that predates the option (and its zt_open_options_init).
zt_file *open_default(const std::string &path, bool prefetch = false) {
  zt_file *f = nullptr;
  if (!prefetch) {
    check(zt_open(path.c_str(), nullptr, &f), "zt_open");
    return f;
  }
  zt_open_options o;
  zt_open_options_init(&o);
  o.prefetch = 1;
  check(zt_open(path.c_str(), &o, &f), "zt_open");
  return f;
}

size_t count_of(zt_file *f) {
  size_t n = 0;
  check(zt_file_object_count(f, &n), "zt_file_object_count");
  return n;
}

uint64_t decoded_length0(const zt_object *o) {
  zt_component_info ci;
  std::memset(&ci, 0, sizeof ci);
  ci.struct_size = sizeof ci;
  check(zt_object_component(o, 0, &ci), "zt_object_component");
  return ci.decoded_length;
}

// open (default options: mapped) + zt_file_read_many of every tensor into
// one arena: `touched` (already written before the clock started: the
// caller's buffers, e.g. a model's parameters loaded into again), or, when
// it is null, a new untouched one, as a loader that returns new memory has.
uint64_t zt_read_all(const std::string &path, uint8_t *touched, uint64_t decoded, bool prefetch) {
  zt_file *f = open_default(path, prefetch);
  size_t n = count_of(f);
  std::vector<zt_read_request> reqs(n);
  std::vector<uint64_t> at(n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    check(zt_file_object_at(f, i, &reqs[i].object), "zt_file_object_at");
    reqs[i].dst_capacity = decoded_length0(reqs[i].object);
    at[i] = total;
    total += (reqs[i].dst_capacity + 63) / 64 * 64;
  }
  Buffer fresh;
  if (!touched) fresh = Buffer(total, false);
  uint8_t *base = touched ? touched : fresh.data();
  if (touched && total > decoded) die("the touched destination is too small");
  for (size_t i = 0; i < n; ++i) reqs[i].dst = base + at[i];
  check(zt_file_read_many(f, reqs.data(), reqs.size()), "zt_file_read_many");
  zt_close(f);
  return total >= 8 ? *reinterpret_cast<const uint64_t *>(base) : 0;
}

// open + zero-copy view of every tensor, every byte of each read once.
uint64_t zt_view_all(const std::string &path, bool prefetch) {
  zt_file *f = open_default(path, prefetch);
  uint64_t sum = 0;
  for (size_t i = 0, n = count_of(f); i < n; ++i) {
    const zt_object *o = nullptr;
    check(zt_file_object_at(f, i, &o), "zt_file_object_at");
    const void *p = nullptr;
    size_t len = 0;
    check(zt_component_view(o, 0, &p, &len), "zt_component_view");
    sum += sum_bytes(static_cast<const uint8_t *>(p), len);
  }
  zt_close(f);
  return sum;
}

// `decoded`: the tensors' bytes, each rounded up to 64 (the workload's
// arena size; zt_read's touched destination).
int child(const std::string &mode, const std::string &path, uint64_t decoded) {
  // Destinations that exist before the load are written once, off the clock.
  Buffer touched;
  if (mode == "zt_read" || mode == "zt_read_pf") touched = Buffer(decoded, true);
  const uint64_t io0 = disk_read_bytes();
  const double t0 = now_s();
  volatile uint64_t sink = 0;
  if (mode == "seq") {
    sink = sequential_read(path);
  } else if (mode == "seq_fresh") {
    Buffer b(file_size(path) + (1 << 20), false);
    sink = sequential_read(path, b.data());
  } else if (mode == "direct") {
    int64_t got = direct_read(path);
    if (got < 0) {
      std::printf("nan 0\n");
      return 0;
    }
    sink = static_cast<uint64_t>(got);
  } else if (mode == "zt_read" || mode == "zt_read_pf") {
    sink = zt_read_all(path, touched.data(), decoded, mode == "zt_read_pf");
  } else if (mode == "zt_read_fresh" || mode == "zt_read_fresh_pf") {
    sink = zt_read_all(path, nullptr, 0, mode == "zt_read_fresh_pf");
  } else if (mode == "zt_view" || mode == "zt_view_pf") {
    sink = zt_view_all(path, mode == "zt_view_pf");
  } else if (mode == "orig_read") {
    sink = read_original(path);
  } else if (mode == "orig_view") {
    sink = view_original(path);
  } else {
    die("unknown child mode " + mode);
  }
  (void)sink;
  const double t = now_s() - t0;
  std::printf("%.9f %llu\n", t, static_cast<unsigned long long>(disk_read_bytes() - io0));
  return 0;
}

// ---- the parent ----

void evict(const Config &cfg, const std::string &path) {
  if (cfg.evict == "drop") {
    ::sync();
    int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd < 0 || ::write(fd, "3\n", 2) != 2) die("cannot write /proc/sys/vm/drop_caches (use --evict fadvise)");
    ::close(fd);
    return;
  }
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die("cannot open " + path);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

struct Sample {
  double seconds;
  double disk_bytes;
};

std::string g_self;

Sample run_child(const Config &cfg, const std::string &mode, const std::string &path, uint64_t decoded) {
  std::string cmd;
  std::string m = mode;
  if (m.size() > 7 && m.compare(m.size() - 7, 7, "@before") == 0) {
    m.resize(m.size() - 7);
    cmd = "LD_LIBRARY_PATH='" + cfg.before + "' ZTENSOR_LIBRARY=\"$(ls '" + cfg.before +
          "'/libztensor.so.*.*.* | head -1)\" ";
  }
  if (m.rfind("py_", 0) == 0)
    cmd += "/usr/bin/python3 '" + cfg.python + "' " + m.substr(3) + " '" + path + "'";
  else
    cmd += "'" + g_self + "' --child " + m + " '" + path + "' " + std::to_string(decoded);
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p) die("cannot run " + cmd);
  char word[64] = {0};
  double disk = 0;
  if (std::fscanf(p, "%63s %lf", word, &disk) != 2 || ::pclose(p) != 0) die("child failed: " + cmd);
  return {std::strtod(word, nullptr), disk};
}

struct Series {
  std::vector<double> t, disk;
};

// Rounds of every mode once, in rotated order, each from a cold file (or,
// warm = true, after the file was read once and left cached).
std::map<std::string, Series> measure(const Config &cfg, const std::string &path, uint64_t decoded,
                                      const std::vector<std::string> &modes, bool warm) {
  std::map<std::string, Series> s;
  if (warm) sequential_read(path);
  for (int r = 0; r < cfg.rounds; ++r) {
    for (size_t k = 0; k < modes.size(); ++k) {
      const std::string &m = modes[(k + static_cast<size_t>(r)) % modes.size()];
      if (!warm) evict(cfg, path);
      Sample x = run_child(cfg, m, path, decoded);
      s[m].t.push_back(x.seconds);
      s[m].disk.push_back(x.disk_bytes);
    }
  }
  return s;
}

std::string label(std::string mode) {
  std::string suffix;
  if (mode.size() > 7 && mode.compare(mode.size() - 7, 7, "@before") == 0) {
    mode.resize(mode.size() - 7);
    suffix = " — library before the change (--before)";
  }
  static const std::map<std::string, const char *> names = {
      {"seq", "sequential read(), 1 MiB blocks (baseline)"},
      {"seq_fresh", "sequential read(), 1 MiB blocks, into one new buffer"},
      {"direct", "O_DIRECT pread, 1 MiB blocks"},
      {"zt_read", "open + read all (zt_file_read_many) into touched buffers"},
      {"zt_read_fresh", "open + read all (zt_file_read_many) into new memory"},
      {"zt_view", "open + view all + read every byte"},
      {"zt_read_pf", "open with prefetch + read all into touched buffers"},
      {"zt_read_fresh_pf", "open with prefetch + read all into new memory"},
      {"zt_view_pf", "open with prefetch + view all + read every byte"},
      {"orig_read", "original-style open + read all"},
      {"orig_view", "original-style mmap + read every byte"},
      {"py_map", "Python torch.load_file (mapped) + sum all"},
      {"py_copy", "Python torch.load_file(copy=True) + sum all"},
  };
  auto it = names.find(mode);
  return (it == names.end() ? mode : std::string(it->second)) + suffix;
}

std::string fmt(const char *f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// One table row per mode: median time and GB/s, spread, disk bytes read,
// seq/mode (ratio of medians, with the range of per-round ratios) and
// orig/mode where the mode has an original-style counterpart.
void report(const std::string &workload, uint64_t fsz, const std::vector<std::string> &modes,
            std::map<std::string, Series> &s, const char *state) {
  const double seq = median(s["seq"].t);
  for (const std::string &m : modes) {
    Series &x = s[m];
    if (std::isnan(x.t[0])) {
      std::printf("| %s | %s | %s | refused by the filesystem | — | — | — | — | — |\n", state, workload.c_str(),
                  label(m).c_str());
      continue;
    }
    const double med = median(x.t);
    const double lo = *std::min_element(x.t.begin(), x.t.end()), hi = *std::max_element(x.t.begin(), x.t.end());
    std::vector<double> per_round;
    for (size_t r = 0; r < x.t.size(); ++r) per_round.push_back(s["seq"].t[r] / x.t[r]);
    const double rlo = *std::min_element(per_round.begin(), per_round.end());
    const double rhi = *std::max_element(per_round.begin(), per_round.end());
    std::string vs_orig = "—";
    const std::string base = m.substr(0, m.find('@'));
    std::string counterpart = base == "zt_read_fresh" || base == "zt_read_fresh_pf" ? "orig_read"
                              : base == "zt_view" || base == "zt_view_pf"           ? "orig_view"
                                                                                    : "";
    if (!counterpart.empty() && s.count(counterpart)) vs_orig = fmt("%.2f", median(s[counterpart].t) / med);
    const std::string vs_fresh = s.count("seq_fresh") ? fmt("%.2f", median(s["seq_fresh"].t) / med) : "—";
    std::printf("| %s | %s | %s | %.0f ms (%.0f–%.0f), %.2f GB/s | %.0f MB | %s | %s | %s | %s |\n", state,
                workload.c_str(), label(m).c_str(), med * 1e3, lo * 1e3, hi * 1e3, fsz / med / 1e9,
                median(x.disk) / 1e6, m == "seq" ? "1.00" : fmt("%.2f", seq / med).c_str(),
                m == "seq" ? "—" : (fmt("%.2f", rlo) + "–" + fmt("%.2f", rhi)).c_str(), vs_fresh.c_str(),
                vs_orig.c_str());
    std::fflush(stdout);
  }
}

// The bars, one line per check, from the medians of this run:
// copy-reads (into touched buffers) against `cat` (0.9x for large and
// mixed, 1/1.2 for small), every cold load against its original-style
// counterpart (1.0x), and, with --before, the library's rows after against
// before, cold and warm (a warm row must not regress).
void verdict(const std::string &workload, std::map<std::string, Series> &cold, std::map<std::string, Series> *warm,
             std::vector<std::string> &out) {
  auto ratio = [](std::map<std::string, Series> &s, const std::string &num, const std::string &den) {
    return s.count(num) && s.count(den) ? median(s[num].t) / median(s[den].t) : std::nan("");
  };
  auto line = [&](const std::string &what, double v, double bar) {
    if (std::isnan(v)) return;
    out.push_back("| " + workload + " | " + what + " | " + fmt("%.2f", v) + " | " +
                  (std::isnan(bar) ? std::string("—") : fmt("%.2f", bar)) + " | " +
                  (std::isnan(bar) ? std::string("—")
                   : v >= bar      ? "met"
                                   : "**not met**") +
                  " |");
  };
  const double seq_bar = workload == "large" || workload == "mixed" ? 0.9
                         : workload == "small"                      ? 1 / 1.2
                                                                    : std::nan("");
  line("cold: `cat` / read into touched buffers", ratio(cold, "seq", "zt_read"), seq_bar);
  line("cold: `cat` / open with prefetch + read into touched buffers", ratio(cold, "seq", "zt_read_pf"), seq_bar);
  line("cold: original-style read / read into new memory", ratio(cold, "orig_read", "zt_read_fresh"), 1.0);
  line("cold: original-style read / open with prefetch + read into new memory",
       ratio(cold, "orig_read", "zt_read_fresh_pf"), 1.0);
  line("cold: original-style map / view all", ratio(cold, "orig_view", "zt_view"), 1.0);
  line("cold: original-style map / open with prefetch + view all", ratio(cold, "orig_view", "zt_view_pf"), 1.0);
  line("cold: original-style read / Python load_file(copy=True)", ratio(cold, "orig_read", "py_copy"), 1.0);
  line("cold: original-style map / Python load_file (mapped)", ratio(cold, "orig_view", "py_map"), 1.0);
  for (const char *m : {"zt_read", "zt_read_fresh", "zt_view", "py_map", "py_copy"})
    line(std::string("cold: before / after, ") + label(m), ratio(cold, std::string(m) + "@before", m), std::nan(""));
  if (warm) {
    line("warm: read / open with prefetch + read (the option's cost on a cached file)",
         ratio(*warm, "zt_read", "zt_read_pf"), std::nan(""));
    line("warm: view all / open with prefetch + view all", ratio(*warm, "zt_view", "zt_view_pf"), std::nan(""));
  }
  if (warm)
    for (const char *m : {"zt_read", "zt_read_fresh", "zt_view"})
      line(std::string("warm: before / after, ") + label(m), ratio(*warm, std::string(m) + "@before", m), std::nan(""));
}

}  // namespace

int main(int argc, char **argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--child") {
      std::string mode = next(), path = next();
      return child(mode, path, std::strtoull(next().c_str(), nullptr, 10));
    } else if (a == "--dir")
      cfg.dir = next();
    else if (a == "--rounds")
      cfg.rounds = std::max(1, std::atoi(next().c_str()));
    else if (a == "--evict")
      cfg.evict = next();
    else if (a == "--only")
      cfg.only = next();
    else if (a == "--python")
      cfg.python = next();
    else if (a == "--no-warm")
      cfg.warm = false;
    else if (a == "--keep")
      cfg.keep = true;
    else if (a == "--before")
      cfg.before = next();
    else
      die("unknown argument " + a);
  }
  if (cfg.evict.empty()) cfg.evict = ::access("/proc/sys/vm/drop_caches", W_OK) == 0 ? "drop" : "fadvise";
  if (cfg.evict != "drop" && cfg.evict != "fadvise") die("--evict takes drop or fadvise");
  char exe[4096];
  ssize_t exe_len = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (exe_len <= 0) die("cannot resolve /proc/self/exe");
  g_self.assign(exe, static_cast<size_t>(exe_len));
  std::string mk = "mkdir -p '" + cfg.dir + "'";
  if (std::system(mk.c_str()) != 0) die("cannot create " + cfg.dir);

  std::string fs = "?";
  if (FILE *p = ::popen(("stat -f -c %T '" + cfg.dir + "' 2>/dev/null").c_str(), "r")) {
    char b[64] = {0};
    if (std::fgets(b, sizeof b, p)) fs.assign(b, std::strcspn(b, "\n"));
    ::pclose(p);
  }
  std::printf("Files in %s (%s). ", cfg.dir.c_str(), fs.c_str());
  std::printf("Cold page cache: before every timed load, %s. %d interleaved rounds; each load in a fresh process.\n\n",
              cfg.evict == "drop" ? "`sync; echo 3 > /proc/sys/vm/drop_caches` (root)"
                                  : "the file (written by this run) is evicted with fdatasync + "
                                    "posix_fadvise(POSIX_FADV_DONTNEED)",
              cfg.rounds);
  std::printf(
      "| cache | workload | load | median (min–max), throughput | disk read | seq / this | per round | "
      "seq into new memory / this | original-style / this |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  std::fflush(stdout);
  std::vector<std::string> verdicts;
  for (auto make : {make_large, make_mixed, make_small, make_large_zstd}) {
    std::string path;
    uint64_t decoded = 0;
    std::vector<std::string> modes, warm_modes;
    {
      Workload w = make(1);
      if (!cfg.only.empty() && cfg.only != w.name) continue;
      path = cfg.dir + "/cold-" + w.name + ".zt";
      decoded = w.total_bytes();
      WriteSettings ws;
      if (w.name == "large_zstd") ws.encoding = ZT_ENCODING_ZSTD;
      write_zt(w, path, ws);
      if (w.name == "large_zstd") {
        modes = {"seq", "seq_fresh", "direct", "zt_read", "zt_read_fresh", "zt_read_pf", "orig_read"};
        warm_modes = {"seq", "zt_read", "zt_read_fresh", "zt_read_pf"};
      } else {
        modes = {"seq",     "seq_fresh",  "direct",    "zt_read",  "zt_read_fresh", "zt_read_pf", "zt_read_fresh_pf",
                 "zt_view", "zt_view_pf", "orig_read", "orig_view"};
        warm_modes = {"seq", "zt_read", "zt_read_fresh", "zt_view", "zt_read_pf", "zt_view_pf"};
        if (!cfg.python.empty() && w.name != "small") {
          modes.push_back("py_map");
          modes.push_back("py_copy");
        }
      }
    }  // the workload's memory is freed before anything is timed
    if (!cfg.before.empty()) {
      for (auto *list : {&modes, &warm_modes}) {
        std::vector<std::string> add;
        for (const std::string &m : *list)
          if ((m.rfind("zt_", 0) == 0 || m.rfind("py_", 0) == 0) && m.find("_pf") == std::string::npos)
            add.push_back(m + "@before");
        list->insert(list->end(), add.begin(), add.end());
      }
    }
    const uint64_t fsz = file_size(path);
    const std::string name = path.substr(path.rfind("cold-") + 5, path.size() - path.rfind("cold-") - 8);
    auto cold = measure(cfg, path, decoded, modes, false);
    report(name, fsz, modes, cold, "cold");
    std::map<std::string, Series> warm;
    if (cfg.warm) {
      warm = measure(cfg, path, decoded, warm_modes, true);
      report(name, fsz, warm_modes, warm, "warm");
    }
    verdict(name, cold, cfg.warm ? &warm : nullptr, verdicts);
    if (!cfg.keep) ::unlink(path.c_str());
  }
  // Ratios of medians: higher is better for the library; a before/after
  // ratio under 1 is a regression, within the per-round spread of the
  // table above it is noise.
  std::printf("\nVerdict (ratios of medians; higher is better for the library):\n\n");
  std::printf("| workload | check | ratio | bar | |\n| --- | --- | --- | --- | --- |\n");
  for (const std::string &v : verdicts) std::printf("%s\n", v.c_str());
  return 0;
}
