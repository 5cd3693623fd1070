// The block cache of a remote source: 64 KiB blocks of the object, least
// recently used dropped beyond the source's cache_bytes, every block also
// charged to a memory budget that several sources may share (the shards of
// one remote set: one budget, not one cache each). No network here.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace zt {

// Bytes held by the remote sources of one set (their cached blocks and
// held tails) against one limit. Thread-safe.
class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit) : limit_(limit) {}
  // Takes n bytes; false (nothing taken) when they do not fit.
  bool charge(uint64_t n);
  // Takes n bytes even past the limit (what a reader cannot do without).
  void force_charge(uint64_t n);
  void release(uint64_t n);

 private:
  const uint64_t limit_;
  std::mutex mu_;
  uint64_t used_ = 0;
};

class BlockCache {
 public:
  static constexpr uint64_t kBlock = uint64_t{64} << 10;
  using Block = std::shared_ptr<const std::vector<uint8_t>>;

  BlockCache(MemoryBudget &budget, uint64_t limit) : budget_(budget), limit_(limit) {}
  ~BlockCache();
  BlockCache(const BlockCache &) = delete;
  BlockCache &operator=(const BlockCache &) = delete;

  // Fills blocks[i] with block first + i where cached (marking it recently
  // used); returns how many were found.
  uint64_t lookup(uint64_t first, std::vector<Block> &blocks) const;
  // Keeps blocks[i] as block first + i, within the limit and the budget:
  // room is made by dropping this cache's least recent blocks; a block
  // that still does not fit is not kept.
  void insert(uint64_t first, const std::vector<Block> &blocks) const;

 private:
  void evict_one() const;

  MemoryBudget &budget_;
  const uint64_t limit_;
  mutable std::mutex mu_;
  mutable std::unordered_map<uint64_t, std::pair<Block, std::list<uint64_t>::iterator>> blocks_;
  mutable std::list<uint64_t> lru_;
  mutable uint64_t used_ = 0;
};

}  // namespace zt
