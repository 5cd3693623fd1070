// Windows-only file behaviour (docs/cross.md, "Windows"): UTF-8 paths with
// non-ASCII characters reach the file system as the same UTF-16 names, and
// a file another program holds open without sharing gets a clear error
// naming it, while its bytes stay as they were. Built and run only in the
// mingw-w64 cross builds, under wine.
#include <gtest/gtest.h>
#include <windows.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_io.h"

namespace {

// Writes one f32 object "w" holding `values` to `path`; returns the status.
zt_status write_values(const std::string &path, const std::vector<float> &values) {
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(path.c_str(), nullptr, &w);
  if (st != ZT_OK) return st;
  const uint64_t shape[1] = {values.size()};
  st = zt_writer_add_dense(w, "w", 1, ZT_F32, shape, 1, values.data(), values.size() * sizeof(float), nullptr);
  if (st != ZT_OK) {
    zt_writer_discard(w);
    return st;
  }
  return zt_writer_finish(w);
}

std::vector<float> read_values(const std::string &path) {
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  if (!f) return {};
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, "w", 1, &o), ZT_OK) << zt_last_error();
  std::vector<float> out(64);
  size_t n = 0;
  if (o) EXPECT_EQ(zt_component_read(o, 0, out.data(), out.size() * sizeof(float), &n), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_close(f);
  out.resize(n / sizeof(float));
  return out;
}

std::wstring wide(const std::string &utf8) {
  const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring w(static_cast<size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), &w[0], n);
  return w;
}

// Names in the folder (as UTF-8), to see that nothing is left behind.
std::vector<std::string> names_in(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(std::filesystem::u8path(dir)))
    names.push_back(e.path().filename().u8string());
  return names;
}

TEST(WindowsFiles, NonAsciiPathRoundTrips) {
  zttest::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  // Latin, Greek, CJK and a character outside the BMP (a UTF-16 surrogate pair).
  const std::string sub = dir.file("d\xC3\xA9j\xC3\xA0-\xCE\xB1\xCE\xB2");
  ASSERT_TRUE(CreateDirectoryW(wide(sub).c_str(), nullptr));
  const std::string path = sub + "/\xE5\xBC\xA0\xE9\x87\x8F-\xF0\x9F\x93\xA6.zt";
  ASSERT_EQ(write_values(path, {1.5f, 2.5f, 3.5f}), ZT_OK) << zt_last_error();
  // The file exists under exactly that UTF-16 name (not a mangled ANSI one).
  EXPECT_NE(GetFileAttributesW(wide(path).c_str()), INVALID_FILE_ATTRIBUTES);
  EXPECT_EQ(read_values(path), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  // Replaced in place, then read again, also with pread access.
  ASSERT_EQ(write_values(path, {7.0f, 8.0f}), ZT_OK) << zt_last_error();
  EXPECT_EQ(read_values(path), (std::vector<float>{7.0f, 8.0f}));
  zt_open_options oo;
  zt_open_options_init(&oo);
  oo.access = ZT_ACCESS_PREAD;
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), &oo, &f), ZT_OK) << zt_last_error();
  zt_close(f);
  // Only the file itself in its folder: no temporary left over.
  EXPECT_EQ(names_in(sub), (std::vector<std::string>{"\xE5\xBC\xA0\xE9\x87\x8F-\xF0\x9F\x93\xA6.zt"}));
}

TEST(WindowsFiles, InvalidUtf8PathIsRefused) {
  zttest::TempDir dir;
  const std::string path = dir.file("bad-\xC3(.zt");
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_NE(std::strstr(zt_last_error(), "not valid UTF-8"), nullptr) << zt_last_error();
  EXPECT_NE(write_values(path, {1.0f}), ZT_OK);
}

TEST(WindowsFiles, FileOpenElsewhereIsNotLost) {
  zttest::TempDir dir;
  const std::string path = dir.file("held.zt");
  ASSERT_EQ(write_values(path, {4.0f, 5.0f}), ZT_OK) << zt_last_error();
  const std::string before = zttest::read_file(path);
  // Another program holds it open and shares nothing.
  HANDLE h = CreateFileW(wide(path).c_str(), GENERIC_READ, 0, nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  ASSERT_NE(h, INVALID_HANDLE_VALUE);

  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_E_IO);
  std::string msg = zt_last_error();
  EXPECT_NE(msg.find("held.zt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("another program has the file open"), std::string::npos) << msg;

  EXPECT_EQ(write_values(path, {9.0f}), ZT_E_IO);
  msg = zt_last_error();
  EXPECT_NE(msg.find("cannot replace '" + path + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is unchanged"), std::string::npos) << msg;
  CloseHandle(h);

  // The old bytes, and no temporary beside them.
  EXPECT_EQ(zttest::read_file(path), before);
  EXPECT_EQ(read_values(path), (std::vector<float>{4.0f, 5.0f}));
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"held.zt"}));
}

TEST(WindowsFiles, ReplaceWhileOurReaderHasTheFile) {
  // Our own readers share the file for deletion. Whether Windows then lets
  // a rename replace it depends on the version (POSIX rename semantics came
  // with Windows 10; wine allows it): either the path gets the new file and
  // the reader keeps reading the old bytes, or the replace fails naming
  // the file and leaving it whole. Never a torn or lost file.
  zttest::TempDir dir;
  const std::string path = dir.file("shared.zt");
  ASSERT_EQ(write_values(path, {1.0f, 2.0f}), ZT_OK) << zt_last_error();
  zt_open_options oo;
  zt_open_options_init(&oo);
  oo.access = ZT_ACCESS_PREAD;
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), &oo, &f), ZT_OK) << zt_last_error();
  const zt_status replaced = write_values(path, {3.0f});
  if (replaced != ZT_OK) {
    EXPECT_EQ(replaced, ZT_E_IO);
    EXPECT_NE(std::string(zt_last_error()).find("is unchanged"), std::string::npos) << zt_last_error();
  }
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "w", 1, &o), ZT_OK);
  float v[2] = {};
  size_t n = 0;
  ASSERT_EQ(zt_component_read(o, 0, v, sizeof v, &n), ZT_OK) << zt_last_error();
  EXPECT_EQ(n, sizeof v);
  EXPECT_EQ(v[1], 2.0f);
  zt_close(f);
  const std::vector<float> expected = replaced == ZT_OK ? std::vector<float>{3.0f} : std::vector<float>{1.0f, 2.0f};
  EXPECT_EQ(read_values(path), expected);
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"shared.zt"}));
}

TEST(WindowsFiles, VerifyBeforeReplaceReadsTheTemporaryBack) {
  // The writer reads its temporary back through a duplicated handle
  // (_dup) before the rename: the rename must still go through after it.
  zttest::TempDir dir;
  const std::string path = dir.file("checked.zt");
  ASSERT_EQ(write_values(path, {1.0f}), ZT_OK) << zt_last_error();
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.verify_before_replace = 1;
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  zt_blob_options bo;
  zt_blob_options_init(&bo);
  bo.digest = ZT_DIGEST_SHA256;
  const float v[3] = {6.0f, 7.0f, 8.0f};
  const uint64_t shape[1] = {3};
  ASSERT_EQ(zt_writer_add_dense(w, "w", 1, ZT_F32, shape, 1, v, sizeof v, &bo), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  EXPECT_EQ(read_values(path), (std::vector<float>{6.0f, 7.0f, 8.0f}));
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"checked.zt"}));
}

// Windows' stat gives every file st_ino 0: the same-file check of
// zt_migrate must not take another existing file for its input, and must
// still catch the input under another spelling of its path.
TEST(WindowsFiles, MigrateTellsItsInputFromAnotherFile) {
  zttest::TempDir dir;
  const std::string a = dir.file("a.zt"), b = dir.file("b.zt");
  ASSERT_EQ(write_values(a, {1, 2, 3}), ZT_OK) << zt_last_error();
  ASSERT_EQ(write_values(b, {9}), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_migrate(a.c_str(), b.c_str(), nullptr), ZT_OK) << zt_last_error();
  EXPECT_EQ(read_values(b), (std::vector<float>{1, 2, 3}));
  std::string other_spelling = a;
  for (char &c : other_spelling)
    if (c == '/') c = '\\';
  EXPECT_EQ(zt_migrate(a.c_str(), other_spelling.c_str(), nullptr), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("is the input file"), std::string::npos) << zt_last_error();
  EXPECT_EQ(read_values(a), (std::vector<float>{1, 2, 3}));
}

TEST(WindowsFiles, HttpReadsSayTheyAreLinuxOnly) {
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open_url("https://example.invalid/model.zt", nullptr, nullptr, &f), ZT_E_UNSUPPORTED);
  EXPECT_EQ(f, nullptr);
  EXPECT_NE(std::strstr(zt_last_error(), "HTTP(S) reads are Linux-only for now"), nullptr) << zt_last_error();
}

}  // namespace

// Threads that use the library's per-thread caches (a zstd decompression
// context, a compression context and its output buffer, the last error
// text) and then exit, many times over. With thread_local objects those
// caches' destructors ran at thread exit on storage mingw's emutls could
// already have released: windows-x86 under wine crashed now and then in
// ~DCtxHolder and ~basic_string (docs/cross.md). They now live in
// fiber-local storage freed by its own callback (platform/thread_cache.h).
TEST(WindowsThreads, ThreadsThatExitAfterUsingTheCachesDoNotCrash) {
  zttest::TempDir dir;
  const std::string path = dir.file("z.zt");
  std::vector<float> values(4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 17);
  auto write_zstd = [&](const std::string &to) {
    zt_writer *w = nullptr;
    if (zt_writer_create(to.c_str(), nullptr, &w) != ZT_OK) return false;
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = ZT_ENCODING_ZSTD;
    const uint64_t shape[1] = {values.size()};
    if (zt_writer_add_dense(w, "w", 1, ZT_F32, shape, 1, values.data(), values.size() * sizeof(float), &bo) != ZT_OK) {
      zt_writer_discard(w);
      return false;
    }
    return zt_writer_finish(w) == ZT_OK;
  };
  ASSERT_TRUE(write_zstd(path)) << zt_last_error();
  std::atomic<int> failures{0};
  for (int round = 0; round < 40; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, round, t] {
        zt_file *f = nullptr;
        if (zt_open(path.c_str(), nullptr, &f) != ZT_OK) {
          ++failures;
          return;
        }
        const zt_object *o = nullptr;
        std::vector<float> out(values.size());
        size_t n = 0;
        if (zt_file_object_by_name(f, "w", 1, &o) != ZT_OK ||
            zt_component_read(o, 0, out.data(), out.size() * sizeof(float), &n) != ZT_OK || out != values)
          ++failures;
        // A failing call: this thread's last error text is set.
        if (zt_file_object_by_name(f, "missing", 7, &o) == ZT_OK || std::strlen(zt_last_error()) == 0) ++failures;
        zt_close(f);
        if (!write_zstd(dir.file("w" + std::to_string(round) + "_" + std::to_string(t) + ".zt"))) ++failures;
      });
    }
    for (auto &th : threads) th.join();
  }
  EXPECT_EQ(failures.load(), 0);
}
