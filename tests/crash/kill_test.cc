// Torn-write protection: a child writing a large file over an existing one
// is SIGKILLed at points spread over its run. Afterwards the destination is
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

// Which format the sweep writes: spec 1.2, or zTensor v2 (canonical, the
// objects added in reverse name order, so that finish() also reorders
// them through the spool: docs/v2.md, Writing).
bool g_v2 = false;

// Writes generation `gen`: every element of every object is `gen`. Returns
// the status of the first failing call.
zt_status write_generation(const std::string &path, int gen) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 1;
  wo.digest = ZT_DIGEST_SHA256;
  if (g_v2) wo.format = 2;
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(path.c_str(), &wo, &w);
  if (st != ZT_OK) return st;
  std::vector<float> data(kFloats, static_cast<float>(gen));
  uint64_t shape[] = {kFloats};
  for (int k = 0; k < kObjects; ++k) {
    const int i = g_v2 ? kObjects - 1 - k : k;
    std::string name = "t" + std::to_string(i);
    st = zt_writer_add_dense(w, name.data(), name.size(), ZT_F32, shape, 1, data.data(), data.size() * 4, nullptr);
    if (st != ZT_OK) {
      zt_writer_discard(w);
      return st;
    }
  }
  return zt_writer_finish(w);
}

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A v2 file checked raw (the v2 reader is other work): magic, footer at
// EOF, the manifest's XXH3, every part's xxh3 digest over its blob, and the
// elements all `gen`. Its generation, or -1.
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
  if (m.is_discarded() || m["objects"].size() != kObjects) return -1;
  int gen = -1;
  for (auto &[name, o] : m["objects"].items()) {
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
// strictly or is inconsistent.
int generation_of(const std::string &path) {
  if (g_v2) return v2_generation_of(path);
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.strict = 1;
  zt_file *f = nullptr;
  if (zt_open(path.c_str(), &opts, &f) != ZT_OK) return -1;
  int gen = -1;
  size_t n = 0;
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
  ASSERT_EQ(write_generation(dest, 1), ZT_OK);
  ASSERT_EQ(generation_of(dest), 1);

  // How long one whole write takes here, to spread the kills over it.
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(write_generation(dest, 2), ZT_OK);
  const auto full = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
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
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(write_generation(dest, gen) == ZT_OK ? 0 : 1);
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
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
  ASSERT_EQ(write_generation(dest, current + 1), ZT_OK);
  EXPECT_EQ(generation_of(dest), current + 1);
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"model.zt"});
}

TEST(KillSafety, SigkillDuringWriteNeverTearsTheDestination) {
  g_v2 = false;
  kill_sweep();
}

// The same for v2 writes (which may also copy the spool into a second
// temporary at finish): the old file or the new one, never a torn one, and
// no temporary left once a write completes.
TEST(KillSafety, SigkillDuringV2WriteNeverTearsTheDestination) {
  g_v2 = true;
  kill_sweep();
}

}  // namespace
