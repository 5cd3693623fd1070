// Objects by name for a writer that adds them one at a time: open
// addressing over (hash, position) pairs, the names themselves staying in
// the caller's objects. No allocation per name and no string copies; a
// std::unordered_map<std::string, size_t> was a fifth of the time of
// writing 100 000 tiny tensors (a node, a key copy and cache misses each).
//
// Names can come from a hostile file (zt convert, append, merge), and names
// chosen to collide would make linear probing quadratic. So a probe walk
// longer than kMaxProbe turns the index, once and for good, into an ordered
// map: every operation costs at most kMaxProbe probes before that and
// O(log n) after, whatever the names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace zt {

class NameIndex {
 public:
  static constexpr size_t npos = SIZE_MAX;

  // The position stored under name, or npos. name_of(pos) gives the name
  // of the object at pos.
  template <typename NameOf>
  size_t find(std::string_view name, NameOf name_of) const {
    if (degraded_) {
      auto it = tree_.find(name);
      return it == tree_.end() ? npos : it->second;
    }
    if (slots_.empty()) return npos;
    const uint64_t h = hash(name);
    size_t probes = 0;
    for (size_t i = h & mask(); slots_[i].pos1; i = (i + 1) & mask()) {
      if (slots_[i].hash == h && name_of(slots_[i].pos1 - 1) == name) return slots_[i].pos1 - 1;
      if (++probes > kMaxProbe) {
        degrade(name_of);
        return find(name, name_of);
      }
    }
    return npos;
  }

  // True once the index has turned into an ordered map (see above).
  bool degraded() const { return degraded_; }

  // Stores pos under name unless the name is there already; returns
  // whether it stored.
  template <typename NameOf>
  bool insert(std::string_view name, size_t pos, NameOf name_of) {
    if (find(name, name_of) != npos) return false;
    ++size_;
    if (degraded_) {
      tree_.emplace(std::string(name), pos);
      return true;
    }
    if (size_ * 2 > slots_.size()) grow(name_of);
    // The entry for `name` joins after a degrade: name_of(pos) need not
    // work yet (the caller may add the object after indexing it).
    const uint64_t h = hash(name);
    if (!degraded_ && free_slot_distance(h) > kMaxProbe) degrade(name_of);
    if (degraded_)
      tree_.emplace(std::string(name), pos);
    else
      place(h, pos);
    return true;
  }

  // Forgets name (backward-shift deletion keeps every probe chain whole).
  template <typename NameOf>
  void erase(std::string_view name, NameOf name_of) {
    if (degraded_) {
      auto it = tree_.find(name);
      if (it != tree_.end()) {
        tree_.erase(it);
        --size_;
      }
      return;
    }
    if (slots_.empty()) return;
    const uint64_t h = hash(name);
    size_t i = h & mask();
    for (; slots_[i].pos1; i = (i + 1) & mask())
      if (slots_[i].hash == h && name_of(slots_[i].pos1 - 1) == name) break;
    if (!slots_[i].pos1) return;
    for (size_t j = (i + 1) & mask(); slots_[j].pos1; j = (j + 1) & mask()) {
      const size_t home = slots_[j].hash & mask();
      // Move j back into the hole at i unless its home lies in (i, j].
      if (((j - home) & mask()) >= ((j - i) & mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    size_t pos1 = 0;  // position + 1; 0 = empty
  };

  static constexpr size_t kMaxProbe = 128;

  static uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
  size_t mask() const { return slots_.size() - 1; }

  size_t free_slot_distance(uint64_t h) const {
    size_t i = h & mask(), probes = 0;
    for (; slots_[i].pos1 && probes <= kMaxProbe; i = (i + 1) & mask()) ++probes;
    return probes;
  }

  // Returns the probes it took.
  size_t place(uint64_t h, size_t pos) {
    size_t i = h & mask(), probes = 0;
    while (slots_[i].pos1) {
      i = (i + 1) & mask();
      ++probes;
    }
    slots_[i] = Slot{h, pos + 1};
    return probes;
  }

  // Moves every entry into the ordered map; the table is gone for good.
  template <typename NameOf>
  void degrade(NameOf name_of) const {
    for (const Slot &s : slots_)
      if (s.pos1) tree_.emplace(std::string(name_of(s.pos1 - 1)), s.pos1 - 1);
    std::vector<Slot>().swap(slots_);
    degraded_ = true;
  }

  // Doubles the table; a re-placement walking too far degrades instead
  // (from the old table, which is still whole), so growing stays bounded.
  template <typename NameOf>
  void grow(NameOf name_of) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.empty() ? 64 : old.size() * 2);
    for (const Slot &s : old)
      if (s.pos1 && place(s.hash, s.pos1 - 1) > kMaxProbe) {
        slots_.swap(old);
        degrade(name_of);
        return;
      }
  }

  // Mutable: a const find may be the walk that finds the table degraded.
  mutable std::vector<Slot> slots_;
  mutable std::map<std::string, size_t, std::less<>> tree_;
  mutable bool degraded_ = false;
  size_t size_ = 0;
};

}  // namespace zt
