// Torn-write protection: a child writing a large file over an existing one
// (a write, a migration, an append; spec 1.2 and v2) is SIGKILLed at points
// spread over its run. Afterwards the destination is
// always a complete file — the previous one or the new one — that opens
// strictly and verifies; never a torn one. The writer's temporary has no
// name where the filesystem has O_TMPFILE; elsewhere a kill can leave it
// (`<dest>.zt-tmp-<pid>-XXXXXX`), and the next writer to the destination
// removes it: after a last, completed write no temporary is left at all.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

namespace {

constexpr int kObjects = 48;
constexpr size_t kFloats = 64 << 10;  // 256 KiB per object, 12 MiB per file

// What the sweep's child does to the destination:
//  - Write12, WriteV2: writes it (v2: canonical, the objects added in
//    reverse name order, so that finish() also reorders them through the
//    spool: docs/v2.md, Writing);
//  - MigrateTo2: zt_migrate of a 1.2 file of the new generation into it,
//    as v2 (zt migrate --to 2);
//  - MigrateTo12: zt_migrate of a v2 file into it, as 1.2 (--to 1.2);
//  - AppendV2: zt append --format 2 of one object: opens the v2
//    destination, copies every object and adds one into a new file that
//    replaces it (with verify_before_replace, as zt append does).
enum class Mode { Write12, WriteV2, MigrateTo2, MigrateTo12, AppendV2 };
Mode g_mode = Mode::Write12;

bool output_is_v2() {
  return g_mode == Mode::WriteV2 || g_mode == Mode::MigrateTo2 || g_mode == Mode::AppendV2;
}

// Writes a file of generation `gen` (every element of every object is
// `gen`) at path, spec 1.2 or v2. Returns the status of the first failing call.
zt_status write_file_of(const std::string &path, int gen, bool v2) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 1;
  wo.digest = ZT_DIGEST_SHA256;
  if (v2) wo.format = 2;
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(path.c_str(), &wo, &w);
  if (st != ZT_OK) return st;
  std::vector<float> data(kFloats, static_cast<float>(gen));
  uint64_t shape[] = {kFloats};
  for (int k = 0; k < kObjects; ++k) {
    const int i = v2 ? kObjects - 1 - k : k;
    std::string name = "t" + std::to_string(i);
    st = zt_writer_add_dense(w, name.data(), name.size(), ZT_F32, shape, 1, data.data(), data.size() * 4, nullptr);
    if (st != ZT_OK) {
      zt_writer_discard(w);
      return st;
    }
  }
  return zt_writer_finish(w);
}

// The migration source of generation `gen` (written by the parent before
// it forks the child that migrates it).
std::string source_of(const std::string &dest, int gen) {
  return dest + ".src-" + std::to_string(gen);
}

zt_status migrate_generation(const std::string &dest, int gen, uint32_t format) {
  zt_migrate_options mo;
  zt_migrate_options_init(&mo);
  mo.format = format;
  mo.sync = 1;
  return zt_migrate(source_of(dest, gen).c_str(), dest.c_str(), &mo);
}

// zt append --format 2 FILE of object "a<gen>" (gen floats of value gen).
zt_status append_generation(const std::string &dest, int gen) {
  zt_file *in = nullptr;
  zt_status st = zt_open(dest.c_str(), nullptr, &in);
  if (st != ZT_OK) return st;
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 1;
  wo.format = 2;
  wo.verify_before_replace = 1;
  zt_writer *w = nullptr;
  st = zt_writer_create(dest.c_str(), &wo, &w);
  size_t n = 0;
  if (st == ZT_OK) st = zt_file_object_count(in, &n);
  for (size_t i = 0; st == ZT_OK && i < n; ++i) {
    const zt_object *o = nullptr;
    st = zt_file_object_at(in, i, &o);
    if (st == ZT_OK) st = zt_writer_copy_object(w, o, nullptr, 0);
  }
  const std::string name = "a" + std::to_string(gen);
  std::vector<float> data(static_cast<size_t>(gen), static_cast<float>(gen));
  const uint64_t shape[] = {data.size()};
  if (st == ZT_OK)
    st = zt_writer_add_dense(w, name.data(), name.size(), ZT_F32, shape, 1, data.data(), data.size() * 4, nullptr);
  st = st == ZT_OK ? zt_writer_finish(w) : (zt_writer_discard(w), st);
  zt_close(in);
  return st;
}

// Parent side, before the child starts: the source a migration reads.
void prepare_generation(const std::string &dest, int gen) {
  if (g_mode == Mode::MigrateTo2 || g_mode == Mode::MigrateTo12) {
    ASSERT_EQ(ZT_OK, write_file_of(source_of(dest, gen), gen, g_mode == Mode::MigrateTo12)) << zt_last_error();
  }
}

void drop_source(const std::string &dest, int gen) {
  std::remove(source_of(dest, gen).c_str());
}

// Child side: brings the destination to generation `gen`. Generation 1 is
// always a plain write (the file the later ones replace or amend).
zt_status write_generation(const std::string &dest, int gen) {
  if (gen == 1 && g_mode == Mode::AppendV2) {
    const zt_status st = write_file_of(dest, 1, true);
    return st == ZT_OK ? append_generation(dest, 1) : st;
  }
  switch (g_mode) {
    case Mode::Write12:
      return write_file_of(dest, gen, false);
    case Mode::WriteV2:
      return write_file_of(dest, gen, true);
    case Mode::MigrateTo2:
      return migrate_generation(dest, gen, 2);
    case Mode::MigrateTo12:
      return migrate_generation(dest, gen, 1);
    case Mode::AppendV2:
      return append_generation(dest, gen);
  }
  return ZT_E_INVALID_ARG;
}

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A v2 file checked raw, independently of our reader: magic, footer at
// EOF, the manifest's XXH3, every part's xxh3 digest over its blob, and the
// elements of the kObjects "t" objects all `gen` (AppendV2: all 1; its "a"
// objects are checked through the reader). Their generation, or -1.
int v2_generation_of(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const uint8_t magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};
  if (f.size() < 48 || std::memcmp(f.data(), magic, 8) || std::memcmp(f.data() + f.size() - 8, magic, 8)) return -1;
  const uint8_t *ft = f.data() + f.size() - 40;
  const uint64_t at = le64(ft), len = le64(ft + 8);
  if (at + len + 40 != f.size() || le64(ft + 16) != XXH3_64bits(f.data() + at, len)) return -1;
  nlohmann::json m = nlohmann::json::from_cbor(f.begin() + static_cast<long>(at),
                                               f.begin() + static_cast<long>(at + len), true, false);
  if (m.is_discarded() || m["objects"].size() < kObjects) return -1;
  int gen = -1;
  for (auto &[name, o] : m["objects"].items()) {
    if (name[0] != 't') continue;
    const auto &p = o["parts"]["data"];
    const uint64_t off = p["blob"][0], n = p["blob"][1];
    if (n != kFloats * 4 || off + n > at) return -1;
    char want[40];
    std::snprintf(want, sizeof want, "xxh3:%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(f.data() + off, static_cast<size_t>(n))));
    if (p["digest"] != want) return -1;
    float first, last;
    std::memcpy(&first, f.data() + off, 4);
    std::memcpy(&last, f.data() + off + n - 4, 4);
    if (first != last || (gen != -1 && static_cast<int>(first) != gen)) return -1;
    gen = static_cast<int>(first);
  }
  return gen;
}

// The generation of a complete file, or -1 if it does not open and verify
// strictly or is inconsistent. AppendV2: the kObjects objects "t*" of
// generation 1 and the appended "a1".."aN" of N elements each; N.
int generation_of(const std::string &path) {
  if (output_is_v2() && v2_generation_of(path) < 0) return -1;
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.strict = 1;
  zt_file *f = nullptr;
  if (zt_open(path.c_str(), &opts, &f) != ZT_OK) return -1;
  int gen = -1;
  size_t n = 0;
  const char *version = nullptr;
  if (zt_file_version(f, &version) != ZT_OK || (std::string(version) == "2") != output_is_v2()) {
    zt_close(f);
    return -1;
  }
  if (g_mode == Mode::AppendV2) {
    size_t total = 0;
    int appended = 0;
    bool ok =
        zt_file_verify(f, 1, nullptr, nullptr) == ZT_OK && zt_file_object_count(f, &total) == ZT_OK && total > kObjects;
    for (int a = 1; ok && static_cast<size_t>(a) <= total - kObjects; ++a) {
      const std::string name = "a" + std::to_string(a);
      const zt_object *o = nullptr;
      float last = -1;
      ok = zt_file_object_by_name(f, name.data(), name.size(), &o) == ZT_OK &&
           zt_component_read_range(o, 0, static_cast<uint64_t>(a) - 1, 1, &last, 4) == ZT_OK &&
           last == static_cast<float>(a);
      appended = a;
    }
    zt_close(f);
    return ok ? appended : -1;
  }
  if (zt_file_verify(f, 1, nullptr, nullptr) == ZT_OK && zt_file_object_count(f, &n) == ZT_OK && n == kObjects) {
    for (size_t i = 0; i < n; ++i) {
      const zt_object *o = nullptr;
      float first = -1, last = -1;
      zt_file_object_at(f, i, &o);
      if (zt_component_read_range(o, 0, 0, 1, &first, 4) != ZT_OK ||
          zt_component_read_range(o, 0, kFloats - 1, 1, &last, 4) != ZT_OK || first != last ||
          (gen != -1 && static_cast<int>(first) != gen)) {
        gen = -1;
        break;
      }
      gen = static_cast<int>(first);
    }
  }
  zt_close(f);
  return gen;
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

void kill_sweep() {
  zttest::TempDir dir;
  const std::string dest = dir.file("model.zt");
  prepare_generation(dest, 1);
  ASSERT_EQ(write_generation(dest, 1), ZT_OK) << zt_last_error();
  drop_source(dest, 1);
  ASSERT_EQ(generation_of(dest), 1);

  // How long one whole write takes here, to spread the kills over it.
  prepare_generation(dest, 2);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(write_generation(dest, 2), ZT_OK) << zt_last_error();
  const auto full = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  drop_source(dest, 2);
  ASSERT_EQ(generation_of(dest), 2);

  const unsigned seed = static_cast<unsigned>(std::random_device{}());
  std::mt19937 rng(seed);
  std::printf("kill sweep: full write %lld us, seed %u\n", static_cast<long long>(full.count()), seed);
  int current = 2, olds = 0, news = 0;
  const int kIterations = 12;
  for (int it = 0; it < kIterations; ++it) {
    const int gen = current + 1;
    // Iteration k kills around k/N of the run (plus jitter); the last ones
    // may come after the rename, which must leave the new file.
    const long long span = std::max<long long>(full.count() * 3 / 2, 1000);  // fork + exec margin
    const long long delay =
        span * it / kIterations + static_cast<long long>(rng() % static_cast<unsigned>(span / kIterations + 1));
    prepare_generation(dest, gen);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(write_generation(dest, gen) == ZT_OK ? 0 : 1);
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    drop_source(dest, gen);
    const int found = generation_of(dest);
    SCOPED_TRACE("iteration " + std::to_string(it) + ", delay " + std::to_string(delay) + " us, seed " +
                 std::to_string(seed));
    ASSERT_TRUE(found == current || found == gen) << "destination is torn or unreadable (generation " << found
                                                  << ", expected " << current << " or " << gen << ")";
    if (found == gen) {
      ++news;
      current = gen;
    } else {
      ++olds;
    }
    // Only the destination and the writer's temporaries may exist.
    for (const auto &e : entries(dir.path())) {
      if (e == "model.zt") continue;
      EXPECT_EQ(e.rfind("model.zt.zt-tmp-", 0), 0u) << "unexpected file " << e;
    }
  }
  size_t temps = entries(dir.path()).size() - 1;
  std::printf("kill sweep: %d kills left the old file, %d the new one, %zu stray temporaries\n", olds, news, temps);
  // A new writer over the same destination still works after the kills,
  // and removes what killed writers left.
  prepare_generation(dest, current + 1);
  ASSERT_EQ(write_generation(dest, current + 1), ZT_OK) << zt_last_error();
  drop_source(dest, current + 1);
  EXPECT_EQ(generation_of(dest), current + 1);
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"model.zt"});
}

TEST(KillSafety, SigkillDuringWriteNeverTearsTheDestination) {
  g_mode = Mode::Write12;
  kill_sweep();
}

// The same for v2 writes (which may also copy the spool into a second
// temporary at finish): the old file or the new one, never a torn one, and
// no temporary left once a write completes.
TEST(KillSafety, SigkillDuringV2WriteNeverTearsTheDestination) {
  g_mode = Mode::WriteV2;
  kill_sweep();
}

// zt migrate --to 2 (a 1.2 source) and --to 1.2 (a v2 source) over an
// existing destination.
TEST(KillSafety, SigkillDuringMigrateToV2NeverTearsTheDestination) {
  g_mode = Mode::MigrateTo2;
  kill_sweep();
}

TEST(KillSafety, SigkillDuringMigrateToV12NeverTearsTheDestination) {
  g_mode = Mode::MigrateTo12;
  kill_sweep();
}

// zt append --format 2: the user's v2 file itself is replaced (after the
// verify_before_replace read-back); a kill at any point leaves it as it
// was or with the object appended.
TEST(KillSafety, SigkillDuringV2AppendNeverTearsTheFile) {
  g_mode = Mode::AppendV2;
  kill_sweep();
}

}  // namespace
