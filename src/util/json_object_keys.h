// The keys of the JSON objects open during a SAX parse, to refuse a key that
// appears twice in one object (a silently dropped value is lost data). Each
// object's keys are sorted once when it closes: O(k log k) per object, where
// nlohmann's callback parser, which rescans a parent object each time a
// nested one closes, is quadratic in the number of nested objects.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace zt {

class JsonObjectKeys {
 public:
  // An object starts. `track` = false for one whose keys the caller checks
  // itself (e.g. a weight_map whose keys it keeps anyway): not copied twice.
  void open(bool track = true) { frames_.push_back(Frame{track, {}}); }
  void add(std::string_view key) {
    if (!frames_.empty() && frames_.back().track) frames_.back().keys.emplace_back(key);
  }
  // The innermost object ends. Returns a key it holds twice, or nullptr.
  const std::string *close() {
    if (frames_.empty()) return nullptr;
    std::vector<std::string> keys = std::move(frames_.back().keys);
    frames_.pop_back();
    std::sort(keys.begin(), keys.end());
    auto it = std::adjacent_find(keys.begin(), keys.end());
    if (it == keys.end()) return nullptr;
    duplicate_ = *it;
    return &duplicate_;
  }

 private:
  struct Frame {
    bool track;
    std::vector<std::string> keys;
  };
  std::vector<Frame> frames_;
  std::string duplicate_;
};

}  // namespace zt
