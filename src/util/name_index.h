// Objects by name for a writer that adds them one at a time: open
// addressing over (hash, position) pairs, the names themselves staying in
// the caller's objects. No allocation per name and no string copies; a
// std::unordered_map<std::string, size_t> was a fifth of the time of
// writing 100 000 tiny tensors (a node, a key copy and cache misses each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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
    if (slots_.empty()) return npos;
    const uint64_t h = hash(name);
    for (size_t i = h & mask(); slots_[i].pos1; i = (i + 1) & mask())
      if (slots_[i].hash == h && name_of(slots_[i].pos1 - 1) == name) return slots_[i].pos1 - 1;
    return npos;
  }

  // Stores pos under name unless the name is there already; returns
  // whether it stored.
  template <typename NameOf>
  bool insert(std::string_view name, size_t pos, NameOf name_of) {
    if (find(name, name_of) != npos) return false;
    if ((size_ + 1) * 2 > slots_.size()) grow();
    place(hash(name), pos);
    ++size_;
    return true;
  }

  // Forgets name (backward-shift deletion keeps every probe chain whole).
  template <typename NameOf>
  void erase(std::string_view name, NameOf name_of) {
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

  static uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
  size_t mask() const { return slots_.size() - 1; }

  void place(uint64_t h, size_t pos) {
    size_t i = h & mask();
    while (slots_[i].pos1) i = (i + 1) & mask();
    slots_[i] = Slot{h, pos + 1};
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.empty() ? 64 : old.size() * 2);
    for (const Slot &s : old)
      if (s.pos1) place(s.hash, s.pos1 - 1);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace zt
