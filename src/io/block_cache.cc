#include "io/block_cache.h"

#include <algorithm>

namespace zt {

bool MemoryBudget::charge(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (used_ + n > limit_) return false;
  used_ += n;
  return true;
}

void MemoryBudget::force_charge(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  used_ += n;
}

void MemoryBudget::release(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  used_ -= std::min(used_, n);
}

BlockCache::~BlockCache() {
  budget_.release(used_);
}

uint64_t BlockCache::lookup(uint64_t first, std::vector<Block> &blocks) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t hits = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    auto it = blocks_.find(first + i);
    if (it == blocks_.end()) continue;
    lru_.splice(lru_.begin(), lru_, it->second.second);
    blocks[i] = it->second.first;
    ++hits;
  }
  return hits;
}

void BlockCache::insert(uint64_t first, const std::vector<Block> &blocks) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const uint64_t b = first + i;
    if (blocks_.count(b) || blocks[i]->size() > limit_) continue;
    // The shared budget first: make room by dropping this cache's own
    // least recent blocks; when there are none, the block is not kept.
    bool room = budget_.charge(blocks[i]->size());
    while (!room && !lru_.empty()) {
      evict_one();
      room = budget_.charge(blocks[i]->size());
    }
    if (!room) continue;
    lru_.push_front(b);
    blocks_.emplace(b, std::make_pair(blocks[i], lru_.begin()));
    used_ += blocks[i]->size();
  }
  while (used_ > limit_ && !lru_.empty()) evict_one();
}

void BlockCache::evict_one() const {
  const uint64_t victim = lru_.back();
  lru_.pop_back();
  auto it = blocks_.find(victim);
  used_ -= it->second.first->size();
  budget_.release(it->second.first->size());
  blocks_.erase(it);
}

}  // namespace zt
