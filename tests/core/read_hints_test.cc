// Read planning for cold caches (issue 26): zt_file_read_many reads a file
// front to back whatever order the requests come in, tells the source once
// that it reads in order, and asks a mapped source for a compressed blob's
// bytes before decoding them; container/read_hints does what it says on
// real files and mappings.
#include "container/read_hints.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "container/source.h"
#include "reader.h"
#include "ztensor.h"

namespace {

// A source over a file's bytes in memory that lends them like a mapping
// (data() is set) and records, in order, every read and hint it gets.
class RecordingSource final : public zt::Source {
 public:
  struct Event {
    char kind;  // 'r' read, 'p' read_pieces, 'w' will_need, 'o' will_read_in_order
    uint64_t offset, len;
  };
  explicit RecordingSource(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {
    data_ = bytes_.data();
    size_ = bytes_.size();
    path_ = "<recording>";
  }
  void read(uint64_t offset, size_t len, void *dst) const override {
    log('r', offset, len);
    if (len) std::memcpy(dst, data_ + offset, len);
  }
  void read_pieces(uint64_t offset, const Piece *pieces, size_t n) const override {
    uint64_t total = 0;
    for (size_t i = 0; i < n; ++i) total += pieces[i].len;
    log('p', offset, total);
    for (size_t i = 0; i < n; ++i) {
      if (pieces[i].dst) std::memcpy(pieces[i].dst, data_ + offset, pieces[i].len);
      offset += pieces[i].len;
    }
  }
  void will_need(uint64_t offset, uint64_t len) const override { log('w', offset, len); }
  void will_read_in_order() const override { log('o', 0, 0); }
  void clear() const {
    std::lock_guard<std::mutex> lock(mu_);
    events_.clear();
  }
  std::vector<Event> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  void log(char kind, uint64_t offset, uint64_t len) const {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back({kind, offset, len});
  }
  std::vector<uint8_t> bytes_;
  mutable std::mutex mu_;
  mutable std::vector<Event> events_;
};

std::string temp_path(const std::string &name) {
  return testing::TempDir() + "/read_hints_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

struct Tensor {
  std::string name;
  size_t floats;
};

// Writes the tensors in the given order (the file's order); element i of
// tensor k is k * 1000003 + i, so a misplaced byte shows.
std::vector<uint8_t> write_file(const std::vector<Tensor> &tensors, zt_encoding enc) {
  const std::string path = temp_path("file.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.encoding = enc;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  for (size_t k = 0; k < tensors.size(); ++k) {
    std::vector<float> v(tensors[k].floats);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((k * 1000003 + i) % 16777216);
    uint64_t shape[1] = {v.size()};
    EXPECT_EQ(zt_writer_add_dense(w, tensors[k].name.data(), tensors[k].name.size(), ZT_F32, shape, 1, v.data(),
                                  v.size() * 4, nullptr),
              ZT_OK)
        << zt_last_error();
  }
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  std::vector<uint8_t> bytes = slurp(path);
  ::unlink(path.c_str());
  return bytes;
}

struct Loaded {
  std::shared_ptr<zt::Reader> reader;
  const RecordingSource *source;
};

Loaded open_recorded(std::vector<uint8_t> bytes, unsigned threads) {
  auto src = std::make_unique<RecordingSource>(std::move(bytes));
  const RecordingSource *raw = src.get();
  zt::ReaderOptions opts;
  opts.threads = threads;
  auto reader = zt::Reader::open_source(std::move(src), opts);
  raw->clear();  // what opening read (the footer, the manifest) is not the plan under test
  return {reader, raw};
}

// One job per object, in the order of `names`, each into its own buffer.
std::vector<zt::ReadJob> jobs_for(const zt::Reader &r, const std::vector<std::string> &names,
                                  std::vector<std::vector<uint8_t>> &out) {
  std::vector<zt::ReadJob> jobs;
  out.assign(names.size(), {});
  for (size_t k = 0; k < names.size(); ++k) {
    for (const auto &o : r.manifest().objects) {
      if (o.name != names[k]) continue;
      zt::ReadJob j;
      j.object = &o;
      j.component = &o.components[0];
      out[k].resize(o.components[0].decoded_length);
      j.dst = out[k].data();
      j.capacity = out[k].size();
      jobs.push_back(j);
    }
  }
  EXPECT_EQ(jobs.size(), names.size());
  return jobs;
}

void expect_contents(const std::vector<uint8_t> &got, size_t k, size_t floats) {
  ASSERT_EQ(got.size(), floats * 4);
  std::vector<float> v(floats);
  std::memcpy(v.data(), got.data(), got.size());
  for (size_t i = 0; i < floats; ++i)
    ASSERT_EQ(v[i], static_cast<float>((k * 1000003 + i) % 16777216)) << "tensor " << k << " element " << i;
}

}  // namespace

// Small blobs first in the file, one large blob (read in chunks) last; the
// requests name the large one first. Before issue 26 the chunks were read
// first and the batch of small blobs after them, far back in the file.
TEST(ReadPlanning, ReadManyReadsTheFileFrontToBackWhateverTheRequestOrder) {
  const std::vector<Tensor> tensors = {{"a0", 3000}, {"a1", 5000}, {"a2", 7}, {"big", 3 * 1024 * 1024}};
  const auto bytes = write_file(tensors, ZT_ENCODING_RAW);
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Loaded l = open_recorded(bytes, threads);
    std::vector<std::vector<uint8_t>> out;
    auto jobs = jobs_for(*l.reader, {"big", "a2", "a0", "a1"}, out);
    l.reader->read_many(jobs);
    for (const auto &j : jobs) ASSERT_EQ(j.status, ZT_OK) << j.error;
    expect_contents(out[0], 3, tensors[3].floats);
    expect_contents(out[1], 2, tensors[2].floats);
    expect_contents(out[2], 0, tensors[0].floats);
    expect_contents(out[3], 1, tensors[1].floats);

    size_t in_order_hints = 0, reads = 0;
    uint64_t last = 0;
    for (const auto &e : l.source->events()) {
      if (e.kind == 'o') {
        ++in_order_hints;
        EXPECT_EQ(reads, 0u) << "the hint comes before the reads";
      }
      if (e.kind != 'r' && e.kind != 'p') continue;
      ++reads;
      // One thread reads strictly in file order; two take the tasks in file
      // order, so neither ever goes back more than one task (4 MiB).
      if (threads == 1) EXPECT_GE(e.offset, last) << "read " << reads << " went back in the file";
      if (threads == 2) EXPECT_GE(e.offset + (uint64_t{4} << 20), last) << "read " << reads;
      last = std::max(last, e.offset);
    }
    EXPECT_EQ(in_order_hints, 1u);
    EXPECT_GE(reads, 4u);  // the batch of small blobs, then the large one's chunks
  }
}

TEST(ReadPlanning, SmallReadsGiveNoHint) {
  const auto bytes = write_file({{"a", 100}, {"b", 200}}, ZT_ENCODING_RAW);
  Loaded l = open_recorded(bytes, 1);
  std::vector<std::vector<uint8_t>> out;
  auto jobs = jobs_for(*l.reader, {"a", "b"}, out);
  l.reader->read_many(jobs);
  for (const auto &e : l.source->events()) EXPECT_NE(e.kind, 'o');
  for (const auto &e : l.source->events()) EXPECT_NE(e.kind, 'w');
}

// A zstd blob is decoded straight from the mapping: the source is asked for
// all of its stored bytes first, so two threads decoding two blobs do not
// fault each other's input in page by page.
TEST(ReadPlanning, CompressedBlobsFromAMappingAreAskedForBeforeDecoding) {
  const auto bytes = write_file({{"x", 1 << 20}, {"y", 1 << 20}}, ZT_ENCODING_ZSTD);
  Loaded l = open_recorded(bytes, 2);
  std::vector<std::vector<uint8_t>> out;
  auto jobs = jobs_for(*l.reader, {"y", "x"}, out);
  l.reader->read_many(jobs);
  for (const auto &j : jobs) ASSERT_EQ(j.status, ZT_OK) << j.error;
  expect_contents(out[0], 1, 1 << 20);
  expect_contents(out[1], 0, 1 << 20);
  size_t asked = 0;
  for (const auto &e : l.source->events())
    if (e.kind == 'w')
      for (const auto &o : l.reader->manifest().objects)
        if (o.components[0].offset == e.offset && o.components[0].length == e.len) ++asked;
  EXPECT_EQ(asked, 2u);
}

#if defined(__linux__)
TEST(ReadHints, SequentialAdviceIsAcceptedOnAFileAndRefusedOnABadDescriptor) {
  const std::string path = temp_path("seq");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(zt::read_hints::sequential(fd));
  ::close(fd);
  ::unlink(path.c_str());
  EXPECT_FALSE(zt::read_hints::sequential(fd));  // closed: EBADF
}

// Every step is advised, to the last byte: a range that runs past the end
// of the mapping fails in its last step only.
TEST(ReadHints, PrefetchCoversTheWholeRangeStepByStep) {
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::string path = temp_path("map");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8 * page), 0);
  // Reserve 9 pages, map the file over the first 8: the ninth stays unmapped.
  void *area = ::mmap(nullptr, 9 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(area, MAP_FAILED);
  ASSERT_EQ(::munmap(static_cast<char *>(area) + 8 * page, page), 0);
  void *map = ::mmap(area, 8 * page, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
  ASSERT_EQ(map, area);
  const auto *p = static_cast<const uint8_t *>(map);
  EXPECT_TRUE(zt::read_hints::prefetch_mapped(p + 100, 8 * page - 100, page));  // unaligned start
  EXPECT_TRUE(zt::read_hints::prefetch_mapped(p, 8 * page, 3 * page));
  EXPECT_TRUE(zt::read_hints::prefetch_mapped(p, 0, page));
  EXPECT_FALSE(zt::read_hints::prefetch_mapped(p, 9 * page, 2 * page));      // last step unmapped
  EXPECT_FALSE(zt::read_hints::prefetch_mapped(p + 8 * page - 1, 2, page));  // crosses into it
  ::munmap(map, 8 * page);
  ::close(fd);
  ::unlink(path.c_str());
}
#endif
