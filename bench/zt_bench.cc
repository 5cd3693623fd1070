// zt_bench: libztensor measured side by side with a baseline from the same
// run (issue 6). Prints a Markdown table of ratios; bench/run.sh builds it
// and writes bench/RESULTS.md. Usage:
//   zt_bench [--dir D] [--reps N] [--big] [--stream-gib G] [--numpy-script P] [--only WORKLOAD]
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include "bench_util.h"
#include "original_writer.h"
#include "v2_file.h"
#include "workloads.h"

using namespace bench;

namespace {

struct Config {
  std::string dir = "/tmp/zt-bench";
  int reps = 5;
  int scale = 1;
  double stream_gib = 4;
  std::string numpy_script;
  std::string only;  // run only this workload ("stream" for the streaming writes)
  bool wants(const std::string &name) const { return only.empty() || only == name; }
};

struct Row {
  std::string measure, workload, baseline, ours, ratio, target, met;
};
std::vector<Row> g_rows;

std::string fmt(const char *f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string gbps(uint64_t bytes, double s) {
  return fmt("%.2f GB/s", bytes / s / 1e9);
}

// ratio >= goal is a pass; goal <= 0 means "report only".
void add(std::string measure, std::string workload, std::string base, std::string ours, double ratio, double goal,
         std::string target, const char *ratio_fmt = "%.2f") {
  std::string met = goal <= 0 ? "—" : (ratio >= goal ? "yes" : "**no**");
  Row r{std::move(measure),
        std::move(workload),
        std::move(base),
        std::move(ours),
        std::isnan(ratio) ? "—" : fmt(ratio_fmt, ratio),
        std::move(target),
        met};
  std::fprintf(stderr, "  %-44s %-12s %-22s %-26s %-8s %s\n", r.measure.c_str(), r.workload.c_str(), r.baseline.c_str(),
               r.ours.c_str(), r.ratio.c_str(), r.met.c_str());
  g_rows.push_back(std::move(r));
}

zt_file *open_zt(const std::string &path, uint32_t threads, zt_access access = ZT_ACCESS_MMAP) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.threads = threads;
  o.access = access;
  zt_file *f = nullptr;
  check(zt_open(path.c_str(), &o, &f), "zt_open");
  return f;
}

size_t object_count(zt_file *f) {
  size_t n = 0;
  check(zt_file_object_count(f, &n), "zt_file_object_count");
  return n;
}

zt_component_info component0(const zt_object *o) {
  zt_component_info ci;
  std::memset(&ci, 0, sizeof ci);
  ci.struct_size = sizeof ci;
  check(zt_object_component(o, 0, &ci), "zt_object_component");
  return ci;
}

// Destination slots for every object's component 0, in manifest order, in
// one pre-touched arena (the caller's buffers).
struct Slots {
  std::vector<uint64_t> offset, size;
  Buffer arena;
};

Slots make_slots(const std::string &path) {
  zt_file *f = open_zt(path, 1);
  Slots s;
  uint64_t off = 0;
  for (size_t i = 0, n = object_count(f); i < n; ++i) {
    const zt_object *o = nullptr;
    check(zt_file_object_at(f, i, &o), "zt_file_object_at");
    uint64_t len = component0(o).decoded_length;
    s.offset.push_back(off);
    s.size.push_back(len);
    off += (len + 63) / 64 * 64;
  }
  zt_close(f);
  s.arena = Buffer(off);
  return s;
}

// open + for each object: look it up, learn its size, read it.
void read_each(const std::string &path, Slots &s, uint32_t threads) {
  zt_file *f = open_zt(path, threads);
  for (size_t i = 0, n = object_count(f); i < n; ++i) {
    const zt_object *o = nullptr;
    check(zt_file_object_at(f, i, &o), "zt_file_object_at");
    zt_component_info ci = component0(o);
    size_t got = 0;
    check(zt_component_read(o, 0, s.arena.data() + s.offset[i], ci.decoded_length, &got), "zt_component_read");
  }
  zt_close(f);
}

// One request per object (component 0) into its slot.
std::vector<zt_read_request> slot_requests(zt_file *f, Slots &s) {
  size_t n = object_count(f);
  std::vector<zt_read_request> reqs(n);
  for (size_t i = 0; i < n; ++i) {
    check(zt_file_object_at(f, i, &reqs[i].object), "zt_file_object_at");
    reqs[i].component = 0;
    reqs[i].dst = s.arena.data() + s.offset[i];
    reqs[i].dst_capacity = s.size[i];
  }
  return reqs;
}

// open + one zt_file_read_many for every object.
void read_many(const std::string &path, Slots &s, uint32_t threads) {
  zt_file *f = open_zt(path, threads);
  std::vector<zt_read_request> reqs = slot_requests(f, s);
  check(zt_file_read_many(f, reqs.data(), reqs.size()), "zt_file_read_many");
  zt_close(f);
}

void bench_copy_read(const Config &cfg, const std::string &path, const Workload &w) {
  Slots s = make_slots(path);
  uint64_t fsz = file_size(path);
  Buffer whole(fsz);
  auto base = [&] { pread_whole(path, whole.data(), fsz); };
  auto [tb, t1] = paired(cfg.reps, base, [&] { read_each(path, s, 1); });
  add("copy-read all (zt_component_read, 1 thread)", w.name, gbps(fsz, tb) + " pread", gbps(w.total_bytes(), t1),
      tb / t1, 0.90, "≥ 0.90");
  auto [tb2, tm] = paired(cfg.reps, base, [&] { read_many(path, s, 0); });
  add("copy-read all (zt_file_read_many, cores)", w.name, gbps(fsz, tb2) + " pread", gbps(w.total_bytes(), tm),
      tb2 / tm, 0.90, "≥ 0.90");
  // Fresh memory too: page faults on a new buffer are part of a real load.
  auto [tb3, tf] = paired(
      cfg.reps,
      [&] {
        Buffer b(fsz, false);
        pread_whole(path, b.data(), fsz);
      },
      [&] {
        Slots fresh;
        fresh.offset = s.offset;
        fresh.size = s.size;
        fresh.arena = Buffer(s.arena.size(), false);
        read_many(path, fresh, 0);
      });
  add("copy-read all into fresh memory (read_many)", w.name, gbps(fsz, tb3) + " pread", gbps(w.total_bytes(), tf),
      tb3 / tf, 0.90, "≥ 0.90");
  // The read path alone, the manifest already parsed: what open costs is
  // the rows above minus this one.
  {
    zt_file *f = open_zt(path, 0);
    std::vector<zt_read_request> reqs = slot_requests(f, s);
    auto [tb4, to] =
        paired(cfg.reps, base, [&] { check(zt_file_read_many(f, reqs.data(), reqs.size()), "zt_file_read_many"); });
    add("copy-read all, file already open (read_many)", w.name, gbps(fsz, tb4) + " pread", gbps(w.total_bytes(), to),
        tb4 / to, 0.90, "≥ 0.90");
    zt_close(f);
  }
  if (w.tensors.size() > 1000)
    add("copy-read all: time per object (read_many)", w.name, "anchor 6.5 µs",
        fmt("%.2f µs", tm / w.tensors.size() * 1e6), NAN, 0, "—");
}

// Verify-on-read (zt_open_options.verify_on_read): open + zt_file_read_many
// of every object of a file whose components carry a digest, with the
// option on against the same reads with it off, in the same run.
void bench_verify_on_read(const Config &cfg, const Workload &w) {
  for (auto [alg, alg_name] : {std::pair<zt_digest_alg, const char *>{ZT_DIGEST_CRC32C, "crc32c"},
                               std::pair<zt_digest_alg, const char *>{ZT_DIGEST_SHA256, "sha256"}}) {
    const std::string path = cfg.dir + "/" + w.name + "-" + alg_name + ".zt";
    write_zt(w, path, {ZT_ENCODING_RAW, alg, 3, 0});
    Slots s = make_slots(path);
    auto read_all = [&](uint32_t verify) {
      zt_open_options o;
      zt_open_options_init(&o);
      o.verify_on_read = verify;
      zt_file *f = nullptr;
      check(zt_open(path.c_str(), &o, &f), "zt_open");
      std::vector<zt_read_request> reqs = slot_requests(f, s);
      check(zt_file_read_many(f, reqs.data(), reqs.size()), "zt_file_read_many");
      zt_close(f);
    };
    auto [t_off, t_on] = paired(
        cfg.reps, [&] { read_all(0); }, [&] { read_all(1); });
    add(std::string("read_many, verify-on-read on vs off (") + alg_name + ")", w.name,
        gbps(w.total_bytes(), t_off) + " off", gbps(w.total_bytes(), t_on), t_off / t_on, 0,
        "report only (the price of checking)");
    ::unlink(path.c_str());
  }
}

// Median seconds per object to open the file and call visit on every
// object (in manifest order); visit's results feed a sink the compiler keeps.
template <typename Visit>
double per_object(const Config &cfg, const std::string &path, Visit visit) {
  size_t n = 0;
  uint64_t sink = 0;
  double t = timed(cfg.reps, [&] {
    zt_file *f = open_zt(path, 0);
    n = object_count(f);
    for (size_t i = 0; i < n; ++i) {
      const zt_object *o = nullptr;
      check(zt_file_object_at(f, i, &o), "zt_file_object_at");
      sink += visit(o);
    }
    zt_close(f);
  });
  if (sink == 1) std::puts("");
  return n ? t / n : 0;
}

void bench_views(const Config &cfg, const std::string &path, const std::string &name) {
  double t = per_object(cfg, path, [](const zt_object *o) {
    const void *p = nullptr;
    size_t len = 0;
    check(zt_component_view(o, 0, &p, &len), "zt_component_view");
    return len;
  });
  add("zero-copy open + view every object", name, name == "small" ? "anchor 1.33 µs" : "—",
      fmt("%.3f µs/object", t * 1e6), NAN, 0, "grows with objects");
}

// Files are mapped private and writable (copy-on-write) so that a write
// through a view cannot crash. The price, if any, shows when the pages are
// first touched: open + view every object + read every byte, against the
// same reads through a read-only shared map of the file.
uint64_t sum_words(const uint8_t *p, size_t len) {
  uint64_t s = 0;
  for (size_t i = 0; i + 8 <= len; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    s += v;
  }
  return s;
}

void bench_cow_views(const Config &cfg, const std::string &path, const std::string &name) {
  uint64_t sink = 0;
  const uint64_t fsz = file_size(path);
  auto base = [&] {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) die("cannot open " + path);
    void *m = ::mmap(nullptr, fsz, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) die("cannot map " + path);
    sink += sum_words(static_cast<const uint8_t *>(m), fsz);
    ::munmap(m, fsz);
    ::close(fd);
  };
  auto ours = [&] {
    zt_file *f = open_zt(path, 0);
    for (size_t i = 0, n = object_count(f); i < n; ++i) {
      const zt_object *o = nullptr;
      check(zt_file_object_at(f, i, &o), "zt_file_object_at");
      const void *p = nullptr;
      size_t len = 0;
      check(zt_component_view(o, 0, &p, &len), "zt_component_view");
      sink += sum_words(static_cast<const uint8_t *>(p), len);
    }
    zt_close(f);
  };
  auto [tb, tz] = paired(cfg.reps, base, ours);
  if (sink == 1) std::puts("");
  add("view + read every byte (private COW map) vs read-only shared map", name, gbps(fsz, tb) + " MAP_SHARED",
      gbps(fsz, tz), tb / tz, 0, "≈ 1 (report only)");
}

void bench_v2_views(const Config &cfg, const std::string &path12, const std::string &path2, const std::string &name);

// Format v2 against our 1.2 path: the same tensors written both ways in
// this run (v2_file.h), read the same ways, 1.2 as the baseline. The ratio
// is 1.2's time over v2's (≥ 1: v2 at least as fast).
// Puts a file's pages in the page cache the way a reader finds them: written
// back, dropped, read again (readahead's folios). How a file was written
// decides the folio sizes of its cached pages otherwise, and mapping small
// folios costs copy-reads up to twice the kernel time: a comparison of two
// files written by two different writers would measure the writers.
void recache(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die("cannot open " + path);
  ::fsync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  std::vector<uint8_t> buf(size_t{8} << 20);
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
    if (n <= 0) break;
    at += n;
  }
  ::close(fd);
}

void bench_v2_copy_read(const Config &cfg, const std::string &path12, const Workload &w) {
  const std::string path2 = cfg.dir + "/" + w.name + ".v2.zt";
  write_v2(w, path2);
  recache(path12);
  recache(path2);
  Slots s12 = make_slots(path12), s2 = make_slots(path2);
  auto [t12, t2] = paired(
      cfg.reps, [&] { read_each(path12, s12, 1); }, [&] { read_each(path2, s2, 1); });
  add("v2 vs 1.2: copy-read all (zt_component_read, 1 thread)", w.name, gbps(w.total_bytes(), t12) + " 1.2",
      gbps(w.total_bytes(), t2), t12 / t2, 0.95, "≥ 0.95 (noise)");
  auto [m12, m2] = paired(
      cfg.reps, [&] { read_many(path12, s12, 0); }, [&] { read_many(path2, s2, 0); });
  add("v2 vs 1.2: copy-read all (zt_file_read_many, cores)", w.name, gbps(w.total_bytes(), m12) + " 1.2",
      gbps(w.total_bytes(), m2), m12 / m2, 0.95, "≥ 0.95 (noise)");
  bench_v2_views(cfg, path12, path2, w.name);
  ::unlink(path2.c_str());
}

// Open + view every object, and (manifest-bound files) open alone.
void bench_v2_views(const Config &cfg, const std::string &path12, const std::string &path2, const std::string &name) {
  auto view_all = [&](const std::string &path) {
    return [&cfg, path] {
      (void)cfg;
      zt_file *f = open_zt(path, 0);
      for (size_t i = 0, n = object_count(f); i < n; ++i) {
        const zt_object *o = nullptr;
        check(zt_file_object_at(f, i, &o), "zt_file_object_at");
        const void *p = nullptr;
        size_t len = 0;
        check(zt_component_view(o, 0, &p, &len), "zt_component_view");
      }
      zt_close(f);
    };
  };
  auto [t12, t2] = paired(cfg.reps, view_all(path12), view_all(path2));
  add("v2 vs 1.2: open + view every object", name, fmt("%.3f ms", t12 * 1e3) + " 1.2", fmt("%.3f ms", t2 * 1e3),
      t12 / t2, 0.95, "≥ 0.95 (noise)");
}

void bench_v2_open(const Config &cfg, const std::string &path12, const Workload &w) {
  const std::string path2 = cfg.dir + "/" + w.name + ".v2.zt";
  write_v2(w, path2);
  recache(path12);
  recache(path2);
  auto open_only = [](const std::string &path) {
    return [path] {
      zt_file *f = open_zt(path, 0);
      if (object_count(f) == 0) die("no objects in " + path);
      zt_close(f);
    };
  };
  auto [t12, t2] = paired(cfg.reps, open_only(path12), open_only(path2));
  const double n = static_cast<double>(w.tensors.size());
  add("v2 vs 1.2: open (parse manifest)", w.name, fmt("%.3f µs/object", t12 / n * 1e6) + " 1.2",
      fmt("%.3f µs/object", t2 / n * 1e6), t12 / t2, 0.95, "≥ 0.95 (noise)");
  bench_v2_views(cfg, path12, path2, w.name);
  ::unlink(path2.c_str());
}

void bench_manifest(const Config &cfg, const std::string &path, const std::string &name) {
  size_t n = 0;
  double t_open = timed(cfg.reps, [&] {
    zt_file *f = open_zt(path, 0);
    n = object_count(f);
    zt_close(f);
  });
  const char *anchor = name == "many10k" ? "anchor 0.66 µs" : name == "many100k" ? "anchor 1.25 µs" : "—";
  add("open (parse manifest)", name, anchor, fmt("%.3f µs/object", t_open / n * 1e6), NAN, 0, "—");
  double t = per_object(cfg, path, [](const zt_object *o) {
    zt_object_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    check(zt_object_get_info(o, &info), "zt_object_get_info");
    return info.ndim + component0(o).length;
  });
  add("open + enumerate (info + component)", name, anchor, fmt("%.3f µs/object", t * 1e6), 1.0 / (t * 1e6),
      name == "many100k" ? 1.0 : 0, "≤ 1 µs/object", "%.2f");
}

// Against the original's way of writing (original_writer.h), the same
// tensors in memory, both outputs replaced at every repetition (the
// baseline truncates its file, our writer renames a new one over it).
void bench_write(const Config &cfg, const Workload &w) {
  std::string zpath = cfg.dir + "/w_" + w.name + ".zt", bpath = cfg.dir + "/w_" + w.name + ".orig.zt";
  const bool per_object = w.tensors.size() > 1000;
  auto ours = [&](double t) {
    return gbps(w.total_bytes(), t) + (per_object ? fmt(", %.2f µs/object", t / w.tensors.size() * 1e6) : "");
  };
  double t_ours[2] = {0, 0};
  for (bool sync : {false, true}) {
    auto [tb, tz] = paired_writes(
        cfg.reps, [&] { write_original(w, bpath, sync); },
        [&] {
          write_zt(w, zpath, {ZT_ENCODING_RAW, ZT_DIGEST_NONE, 3, 0, sync});
        });
    t_ours[sync] = tz;
    add(std::string("write raw vs original-style write() loop") + (sync ? ", both fsync (sync=1)" : " (sync=0)"),
        w.name, gbps(w.total_bytes(), tb) + (sync ? " write()+fsync" : " write()"), ours(tz), tb / tz, 1.0, "≥ 1.0");
  }
  add("price of durability: sync=0 time / sync=1 time", w.name, ours(t_ours[0]) + " sync=0",
      ours(t_ours[1]) + " sync=1", t_ours[0] / t_ours[1], 0, "—");
  if (!per_object) {
    // What a digest adds to a write (each blob's digest is computed beside
    // its write on a second thread when the blob is big).
    for (zt_digest_alg alg : {ZT_DIGEST_CRC32C, ZT_DIGEST_SHA256}) {
      auto [tn, td] = paired_writes(
          cfg.reps, [&] { write_zt(w, zpath, {}); },
          [&] {
            write_zt(w, zpath, {ZT_ENCODING_RAW, alg, 3, 0});
          });
      add(std::string("write raw with a ") + (alg == ZT_DIGEST_CRC32C ? "crc32c" : "sha256") + " digest vs none",
          w.name, gbps(w.total_bytes(), tn) + " no digest", gbps(w.total_bytes(), td), tn / td, 0,
          "report only (the price of a digest)");
    }
    auto [tw, ts] = paired_writes(
        cfg.reps, [&] { write_zt(w, zpath, {}); },
        [&] {
          write_zt(w, zpath, {ZT_ENCODING_RAW, ZT_DIGEST_NONE, 3, 0, false, size_t{8} << 20});
        });
    add("streaming write (8 MiB appends) vs whole blobs", w.name, gbps(w.total_bytes(), tw) + " add_dense",
        gbps(w.total_bytes(), ts), tw / ts, 0.90, "≥ 0.90");
  }
  ::unlink(zpath.c_str());
  ::unlink(bpath.c_str());
}

// zTensor v2 writes (docs/v2.md, Writing) against our 1.2 writer, the same
// tensors in the same run. Canonical v2 hashes every byte (xxh3), so it is
// set against 1.2 both without a digest and with crc32c.
void bench_write_v2(const Config &cfg, const Workload &w) {
  const std::string a = cfg.dir + "/w2_" + w.name + ".zt", b = cfg.dir + "/w2_" + w.name + ".v12.zt";
  WriteSettings v12{}, v12crc{ZT_ENCODING_RAW, ZT_DIGEST_CRC32C}, canon{}, rev{}, nc{}, v12z{ZT_ENCODING_ZSTD},
      ncz{ZT_ENCODING_ZSTD};
  canon.format = rev.format = nc.format = ncz.format = 2;
  rev.reversed = true;
  nc.canonical = ncz.canonical = false;
  nc.alignment = 4096;
  struct Row {
    const char *what;
    const WriteSettings *base, *v2;
  } rows[] = {
      {"v2 canonical write vs 1.2 write (no digest)", &v12, &canon},
      {"v2 canonical write vs 1.2 write with crc32c", &v12crc, &canon},
      {"v2 canonical write, tensors added in reverse order, vs 1.2", &v12, &rev},
      {"v2 non-canonical write (4 KiB, xxh3) vs 1.2", &v12, &nc},
      {"v2 zt.zstd-seekable/1 write vs 1.2 zstd-3", &v12z, &ncz},
  };
  for (const Row &r : rows) {
    if (r.v2 == &ncz && w.tensors.size() > 1000) continue;  // zstd of 100k tiny tensors says nothing new
    auto [t12, t2] = paired_writes(
        cfg.reps, [&] { write_zt(w, b, *r.base); }, [&] { write_zt(w, a, *r.v2); });
    add(r.what, w.name, gbps(w.total_bytes(), t12) + " 1.2", gbps(w.total_bytes(), t2), t12 / t2, 0.9, "≥ 0.90");
  }
  ::unlink(a.c_str());
  ::unlink(b.c_str());
}

// zt.zstd-seekable/1 (issue 33 §3): a 1 MiB range of a large seekable part
// (64 MiB by default, 1 GiB with --big) decodes one frame, not the part.
// Baseline: decoding the whole part, same file, same run. The ratio is
// whole-part time over range time; decoding only the needed frame makes it
// about part size / 1 MiB.
void bench_v2_seekable_range(const Config &cfg) {
  const uint64_t part = uint64_t{64} << 20 << (cfg.scale == 4 ? 4 : 0);
  const std::string path = cfg.dir + "/seekable.v2.zt";
  std::vector<uint8_t> data(static_cast<size_t>(part));
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < data.size(); ++i) {  // half noise, half runs: compresses about 2x
    if (i % 2048 < 1024) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    data[i] = static_cast<uint8_t>(x);
  }
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.format = 2;
  wo.canonical = 0;
  zt_writer *w = nullptr;
  check(zt_writer_create(path.c_str(), &wo, &w), "zt_writer_create");
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  const uint64_t shape[] = {part};
  check(zt_writer_add_dense(w, "p", 1, ZT_U8, shape, 1, data.data(), data.size(), &z), "zt_writer_add_dense");
  check(zt_writer_finish(w), "zt_writer_finish");
  const uint64_t mib = uint64_t{1} << 20, first = part / 2 / mib * mib;  // one whole frame in the middle
  std::vector<uint8_t> out(data.size());
  zt_file *f = open_zt(path, 1);
  const zt_object *o = nullptr;
  check(zt_file_object_at(f, 0, &o), "zt_file_object_at");
  auto whole = [&] {
    size_t got = 0;
    check(zt_component_read(o, 0, out.data(), out.size(), &got), "zt_component_read");
  };
  auto range = [&] { check(zt_component_read_range(o, 0, first, mib, out.data(), mib), "zt_component_read_range"); };
  auto [tw, tr] = paired(cfg.reps, whole, range);
  if (std::memcmp(out.data(), data.data() + first, mib) != 0) die("seekable range read returned wrong bytes");
  zt_close(f);
  const double frames = static_cast<double>(part / mib);
  add("v2 zt.zstd-seekable/1: read 1 MiB range vs decode whole part", fmt("%.0f MiB part", frames),
      fmt("%.2f ms whole", tw * 1e3), fmt("%.3f ms range", tr * 1e3), tw / tr, frames / 4,
      fmt("≥ %.0f (part/4 MiB)", frames / 4));
  ::unlink(path.c_str());
}

void bench_write_many(const Config &cfg, const Workload &w) {
  std::string zpath = cfg.dir + "/w_" + w.name + ".zt";
  double t = timed(cfg.reps, [&] { write_zt(w, zpath, {}); });
  add("write tiny objects", w.name, "anchor 1.72 µs", fmt("%.3f µs/object", t / w.tensors.size() * 1e6), NAN, 0, "—");
  ::unlink(zpath.c_str());
}

struct Frame {
  const uint8_t *src;
  size_t len, decoded;
};

void bench_zstd(const Config &cfg, const std::string &path, const Workload &w) {
  Slots s = make_slots(path);
  // The frames, located through the API, mapped once for the bare loop.
  int fd = ::open(path.c_str(), O_RDONLY);
  uint64_t fsz = file_size(path);
  auto *map = static_cast<const uint8_t *>(::mmap(nullptr, fsz, PROT_READ, MAP_SHARED, fd, 0));
  std::vector<Frame> frames;
  uint64_t stored = 0;
  {
    zt_file *f = open_zt(path, 1);
    for (size_t i = 0, n = object_count(f); i < n; ++i) {
      const zt_object *o = nullptr;
      check(zt_file_object_at(f, i, &o), "zt_file_object_at");
      zt_component_info ci = component0(o);
      if (ci.encoding != ZT_ENCODING_ZSTD) die("large_zstd component is not zstd");
      frames.push_back({map + ci.offset, ci.length, ci.decoded_length});
      stored += ci.length;
    }
    zt_close(f);
  }
  ZSTD_DCtx *d = ZSTD_createDCtx();
  auto bare = [&] {
    for (size_t i = 0; i < frames.size(); ++i) {
      size_t r = ZSTD_decompressDCtx(d, s.arena.data() + s.offset[i], s.size[i], frames[i].src, frames[i].len);
      if (ZSTD_isError(r) || r != frames[i].decoded) die("bare zstd decode failed");
    }
  };
  auto [tb, t1] = paired(cfg.reps, bare, [&] { read_each(path, s, 1); });
  add("zstd decode, 1 thread", w.name, gbps(w.total_bytes(), tb) + " ZSTD_decompressDCtx", gbps(w.total_bytes(), t1),
      tb / t1, 0.95, "≥ 0.95");
  auto [tm1, tm2] = paired(
      cfg.reps, [&] { read_many(path, s, 1); }, [&] { read_many(path, s, 2); });
  add("zstd decode many components, 2 thr vs 1", w.name, gbps(w.total_bytes(), tm1) + " 1 thread",
      gbps(w.total_bytes(), tm2) + " 2 threads", tm1 / tm2, 1.8, "≥ 1.8×");
  add("zstd compression ratio", w.name, "anchor 2.68×", fmt("%.2f×", double(w.total_bytes()) / stored), NAN, 0, "—");
  ZSTD_freeDCtx(d);
  ::munmap(const_cast<uint8_t *>(map), fsz);
  ::close(fd);
}

void bench_zstd_write(const Config &cfg, const Workload &w) {
  std::string p1 = cfg.dir + "/wz1.zt", p2 = cfg.dir + "/wz2.zt";
  WriteSettings one{ZT_ENCODING_ZSTD, ZT_DIGEST_NONE, 3, 1}, all{ZT_ENCODING_ZSTD, ZT_DIGEST_NONE, 3, 0};
  double cpu = 0, wall = 0;
  auto [t1, t2] = paired_writes(
      cfg.reps, [&] { write_zt(w, p1, one); },
      [&] {
        double c0 = cpu_s(), w0 = now_s();
        write_zt(w, p2, all);
        cpu += cpu_s() - c0;
        wall += now_s() - w0;
      });
  add("zstd-3 write, cores vs 1 thread", w.name, gbps(w.total_bytes(), t1) + " 1 thread",
      gbps(w.total_bytes(), t2) + fmt(", CPU/wall %.2f", cpu / wall), t1 / t2, 0, "uses all cores");
  auto [to, tz] = paired_writes(
      cfg.reps, [&] { write_original_zstd(w, p1, 3); }, [&] { write_zt(w, p2, all); });
  add("zstd-3 write vs original-style ZSTD_compress + write()", w.name, gbps(w.total_bytes(), to) + " 1 thread",
      gbps(w.total_bytes(), tz), to / tz, 1.8, "≥ 1.8×");
  WriteSettings streamed = all;
  streamed.stream_piece = size_t{8} << 20;
  auto [tw, ts] = paired_writes(
      cfg.reps, [&] { write_zt(w, p2, all); }, [&] { write_zt(w, p2, streamed); });
  add("zstd-3 streaming write (8 MiB appends) vs whole blobs", w.name, gbps(w.total_bytes(), tw) + " add_dense",
      gbps(w.total_bytes(), ts), tw / ts, 0.90, "≥ 0.90");
  ::unlink(p1.c_str());
  ::unlink(p2.c_str());
}

void verify_each(const std::string &path) {
  zt_file *f = open_zt(path, 1);
  for (size_t i = 0, n = object_count(f); i < n; ++i) {
    const zt_object *o = nullptr;
    check(zt_file_object_at(f, i, &o), "zt_file_object_at");
    zt_verify_result r;
    check(zt_component_verify(o, 0, &r), "zt_component_verify");
    if (r != ZT_VERIFY_OK) die("component has no digest");
  }
  zt_close(f);
}

void bench_digests(const Config &cfg, const Workload &w) {
  std::string sp = cfg.dir + "/sha.zt", cp = cfg.dir + "/crc.zt";
  write_zt(w, sp, {ZT_ENCODING_RAW, ZT_DIGEST_SHA256});
  write_zt(w, cp, {ZT_ENCODING_RAW, ZT_DIGEST_CRC32C});
  int fd = ::open(sp.c_str(), O_RDONLY);
  uint64_t fsz = file_size(sp);
  auto *map = static_cast<const uint8_t *>(::mmap(nullptr, fsz, PROT_READ, MAP_SHARED, fd, 0));
  std::vector<Frame> blobs;
  {
    zt_file *f = open_zt(sp, 1);
    for (size_t i = 0, n = object_count(f); i < n; ++i) {
      const zt_object *o = nullptr;
      check(zt_file_object_at(f, i, &o), "zt_file_object_at");
      zt_component_info ci = component0(o);
      blobs.push_back({map + ci.offset, ci.length, ci.length});
    }
    zt_close(f);
  }
  auto evp = [&] {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char md[32];
    unsigned int n = 0;
    for (const auto &b : blobs) {
      EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
      EVP_DigestUpdate(ctx, b.src, b.len);
      EVP_DigestFinal_ex(ctx, md, &n);
    }
    EVP_MD_CTX_free(ctx);
  };
  auto [tb, ts] = paired(cfg.reps, evp, [&] { verify_each(sp); });
  add("sha256 verify, 1 thread", w.name, gbps(w.total_bytes(), tb) + " EVP loop", gbps(w.total_bytes(), ts), tb / ts,
      0.95, "≥ 0.95");
  auto [ts2, tc] = paired(
      cfg.reps, [&] { verify_each(sp); }, [&] { verify_each(cp); });
  add("crc32c verify vs sha256 verify", w.name, gbps(w.total_bytes(), ts2) + " sha256", gbps(w.total_bytes(), tc),
      ts2 / tc, 5.0, "≥ 5× faster", "%.1f×");
  double tv = timed(cfg.reps, [&] {
    zt_file *f = open_zt(sp, 0);
    check(zt_file_verify(f, 0, nullptr, nullptr), "zt_file_verify");
    zt_close(f);
  });
  add("sha256 zt_file_verify, cores vs 1 thread", w.name, gbps(w.total_bytes(), ts2) + " 1 thread",
      gbps(w.total_bytes(), tv), ts2 / tv, 0, "—");
  ::munmap(const_cast<uint8_t *>(map), fsz);
  ::close(fd);
  ::unlink(sp.c_str());
  ::unlink(cp.c_str());
}

// The streaming-write child: one component of `gib` GiB in 8 MiB pieces.
int stream_child(const std::string &path, double gib, zt_encoding enc) {
  const size_t piece = size_t{8} << 20;
  const uint64_t total = static_cast<uint64_t>(gib * (uint64_t{1} << 30)) / piece * piece;
  Buffer buf(piece);
  auto *f = reinterpret_cast<float *>(buf.data());
  for (size_t i = 0; i < piece / 4; ++i) f[i] = static_cast<float>(i % 300) * 0.25f;
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  check(zt_writer_create(path.c_str(), &wo, &w), "zt_writer_create");
  uint64_t shape[1] = {total / 4};
  check(zt_writer_begin_object(w, "big", 3, nullptr, shape, 1), "zt_writer_begin_object");
  zt_blob_options bo;
  zt_blob_options_init(&bo);
  bo.encoding = enc;
  bo.digest = ZT_DIGEST_CRC32C;
  check(zt_write_blob_begin(w, "big", 3, "data", ZT_F32, &bo), "zt_write_blob_begin");
  for (uint64_t done = 0; done < total; done += piece) check(zt_write_blob_append(w, buf.data(), piece), "append");
  check(zt_write_blob_end(w), "zt_write_blob_end");
  check(zt_writer_finish(w), "zt_writer_finish");
  return 0;
}

// Runs the streaming write in a child process (forked while this process
// is still small) and reports the child's peak RSS.
void bench_stream(const Config &cfg, double gib, zt_encoding enc) {
  std::string path = cfg.dir + "/stream.zt";
  double t0 = now_s();
  pid_t pid = fork();
  if (pid == 0) _exit(stream_child(path, gib, enc));
  int st = 0;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) die("streaming child failed");
  double t = now_s() - t0;
  ::unlink(path.c_str());
  double rss_mib = ru.ru_maxrss / 1024.0;
  add(std::string("streaming write, 8 MiB pieces, ") + (enc == ZT_ENCODING_ZSTD ? "zstd-3" : "raw") + "+crc32c",
      fmt("%.0f GiB", gib), "—", fmt("peak RSS %.1f MiB", rss_mib) + ", " + gbps(uint64_t(gib * (1ull << 30)), t),
      64.0 / rss_mib, 1.0, "RSS ≤ 64 MiB", "%.2f");
}

// numpy's save/load of the same tensors, timed inside Python by
// bench/numpy_bench.py; returns name -> median seconds.
std::map<std::string, double> run_numpy(const Config &cfg, const Workload &w, bool npy) {
  std::string shapes = cfg.dir + "/shapes_" + w.name + ".txt";
  write_shape_list(w, shapes);
  std::string cmd = "/usr/bin/python3 '" + cfg.numpy_script + "' '" + shapes + "' '" + cfg.dir + "' " +
                    std::to_string(std::min(cfg.reps, 3)) + (npy ? " npy" : "");
  std::map<std::string, double> out;
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p) die("cannot run " + cmd);
  char key[64];
  double v;
  while (std::fscanf(p, "%63s %lf", key, &v) == 2) out[key] = v;
  if (::pclose(p) != 0) die("numpy benchmark failed: " + cmd);
  ::unlink(shapes.c_str());
  return out;
}

void bench_numpy(const Config &cfg, const Workload &w, bool npy) {
  auto np = run_numpy(cfg, w, npy);
  std::string zpath = cfg.dir + "/np_" + w.name + ".zt";
  // Replacing the file, as numpy.save/savez replace theirs (O_TRUNC), with
  // writeback drained before each repetition on both sides.
  double tw = timed_writes(std::min(cfg.reps, 3), [&] { write_zt(w, zpath, {}); });
  Slots s = make_slots(zpath);
  // Like numpy.load, each tensor lands in freshly allocated memory.
  double tr = timed(std::min(cfg.reps, 3), [&] {
    Slots fresh;
    fresh.offset = s.offset;
    fresh.size = s.size;
    fresh.arena = Buffer(s.arena.size(), false);
    read_many(zpath, fresh, 0);
  });
  for (const char *fmt_name : {"npz", "npy"}) {
    std::string k = fmt_name;
    if (!np.count("save_" + k)) continue;
    add("write vs numpy." + std::string(k == "npz" ? "savez" : "save (one .npy per tensor)"), w.name,
        gbps(w.total_bytes(), np["save_" + k]), gbps(w.total_bytes(), tw), np["save_" + k] / tw, 1.0, "≥ 1.0");
    add("read vs numpy.load (" + k + ")", w.name, gbps(w.total_bytes(), np["load_" + k]), gbps(w.total_bytes(), tr),
        np["load_" + k] / tr, 1.0, "≥ 1.0");
  }
  ::unlink(zpath.c_str());
}

// In a fresh process (cold heap, as a program that loads a model once):
// open + read every tensor into one new arena (as the warm "fresh memory"
// row: same kind of destination as the baseline's, so the row measures
// what the library costs in a new process), or the baseline, the whole
// file into one new buffer. Prints the seconds.
int cold_read_child(const std::string &path, const std::string &mode) {
  double t0 = now_s();
  if (mode == "pread") {
    uint64_t fsz = file_size(path);
    Buffer b(fsz, false);
    pread_whole(path, b.data(), fsz);
    std::printf("%.9f\n", now_s() - t0);
    return 0;
  }
  zt_file *f = open_zt(path, 0);
  size_t n = object_count(f);
  std::vector<zt_read_request> reqs(n);
  std::vector<uint64_t> at(n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    check(zt_file_object_at(f, i, &reqs[i].object), "zt_file_object_at");
    zt_component_info ci = component0(reqs[i].object);
    at[i] = total;
    reqs[i].component = 0;
    reqs[i].dst_capacity = ci.decoded_length;
    total += (ci.decoded_length + 63) / 64 * 64;
  }
  Buffer arena(total, false);
  for (size_t i = 0; i < n; ++i) reqs[i].dst = arena.data() + at[i];
  check(zt_file_read_many(f, reqs.data(), reqs.size()), "zt_file_read_many");
  zt_close(f);
  std::printf("%.9f\n", now_s() - t0);
  return 0;
}

// The child's own figure: exec and process teardown left out.
double run_cold_child(const std::string &self, const std::string &path, const char *mode) {
  std::string cmd = "'" + self + "' --cold-read '" + path + "' " + mode;
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p) die("cannot run " + cmd);
  double t = -1;
  if (std::fscanf(p, "%lf", &t) != 1 || ::pclose(p) != 0) die("cold read child failed: " + cmd);
  return t;
}

void bench_cold_read(const Config &cfg, const std::string &self, const std::string &path, const Workload &w) {
  uint64_t fsz = file_size(path);
  std::vector<double> b, z;
  for (int r = 0; r < cfg.reps; ++r) {
    b.push_back(run_cold_child(self, path, "pread"));
    z.push_back(run_cold_child(self, path, "zt"));
  }
  double mb = median(b), mz = median(z);
  add("first open + read all, fresh process", w.name, gbps(fsz, mb) + " pread, new buffer", gbps(w.total_bytes(), mz),
      mb / mz, 0.90, "≥ 0.90");
}

void print_table() {
  std::printf("| measure | workload | baseline (same run) | libztensor | ratio | target | met |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const auto &r : g_rows)
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.measure.c_str(), r.workload.c_str(), r.baseline.c_str(),
                r.ours.c_str(), r.ratio.c_str(), r.target.c_str(), r.met.c_str());
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
    if (a == "--dir")
      cfg.dir = next();
    else if (a == "--reps")
      cfg.reps = std::max(1, std::atoi(next().c_str()));
    else if (a == "--big")
      cfg.scale = 4;
    else if (a == "--stream-gib")
      cfg.stream_gib = std::atof(next().c_str());
    else if (a == "--only")
      cfg.only = next();
    else if (a == "--numpy-script")
      cfg.numpy_script = next();
    else if (a == "--cold-read") {
      std::string path = next();
      return cold_read_child(path, next());
    } else
      die("unknown argument " + a);
  }
  // Resolved now: the cold-read children are this program run again.
  char exe[4096];
  ssize_t exe_len = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (exe_len <= 0) die("cannot resolve /proc/self/exe");
  const std::string self(exe, static_cast<size_t>(exe_len));
  std::string mk = "mkdir -p '" + cfg.dir + "'";
  if (std::system(mk.c_str()) != 0) die("cannot create " + cfg.dir);

  // --only write_v2: just the v2 write rows, on every workload;
  // --only write_v2:small (or :large, :mixed, :many100k): one workload.
  if (cfg.only.rfind("write_v2", 0) == 0) {
    const std::string one = cfg.only.size() > 9 ? cfg.only.substr(9) : "";
    for (auto make : {make_large, make_mixed, make_small}) {
      Workload w = make(cfg.scale);
      if (one.empty() || one == w.name) bench_write_v2(cfg, w);
    }
    if (one.empty() || one == "many100k") bench_write_v2(cfg, make_many(100000));
    print_table();
    return 0;
  }
  // First, while this process is small: the streaming writes in children.
  if (cfg.stream_gib > 0 && cfg.wants("stream")) {
    bench_stream(cfg, cfg.stream_gib, ZT_ENCODING_RAW);
    bench_stream(cfg, std::min(cfg.stream_gib, 1.0), ZT_ENCODING_ZSTD);
  }
  for (auto make : {make_large, make_mixed, make_small}) {
    Workload w = make(cfg.scale);
    if (!cfg.wants(w.name)) continue;
    std::string path = cfg.dir + "/" + w.name + ".zt";
    write_zt(w, path, {});
    bench_copy_read(cfg, path, w);
    bench_v2_copy_read(cfg, path, w);
    bench_cold_read(cfg, self, path, w);
    bench_write(cfg, w);
    bench_write_v2(cfg, w);
    if (w.tensors.size() > 1000) bench_views(cfg, path, w.name);
    if (w.name != "small") bench_cow_views(cfg, path, w.name);
    if (w.name != "small") bench_verify_on_read(cfg, w);
    if (w.name == "large" || w.name == "large_1g") bench_digests(cfg, w);
    if (!cfg.numpy_script.empty()) bench_numpy(cfg, w, w.tensors.size() < 1000);
    ::unlink(path.c_str());
  }
  if (cfg.wants(cfg.scale == 1 ? "large_zstd" : "large_zstd_1g")) {
    Workload w = make_large_zstd(cfg.scale);
    std::string path = cfg.dir + "/" + w.name + ".zt";
    write_zt(w, path, {ZT_ENCODING_ZSTD, ZT_DIGEST_NONE, 3, 0});
    bench_zstd(cfg, path, w);
    bench_zstd_write(cfg, w);
    ::unlink(path.c_str());
  }
  if (cfg.wants("seekable")) bench_v2_seekable_range(cfg);
  for (size_t n : {size_t{10000}, size_t{100000}}) {
    Workload w = make_many(n);
    if (!cfg.wants(w.name)) continue;
    std::string path = cfg.dir + "/" + w.name + ".zt";
    write_zt(w, path, {});
    bench_manifest(cfg, path, w.name);
    if (w.name == "many100k") bench_v2_open(cfg, path, w);
    bench_views(cfg, path, w.name);
    bench_write_many(cfg, w);
    if (w.name == "many100k") {
      bench_write(cfg, w);
      bench_write_v2(cfg, w);
    }
    ::unlink(path.c_str());
  }
  print_table();
  return 0;
}
