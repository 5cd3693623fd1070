// The body of a multi-range response (RFC 9110 14.6, multipart/byteranges):
// each part's bytes go to the buffer of the range asked for. Used when one
// request asks for many ranges of an object (a column split's rows); no
// network here. Bounded: a part header line longer than 8 KiB, a part not
// asked for, or bytes after the last part stop the parse.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zt {

struct RangePart {
  uint64_t offset, len;
  uint8_t *dst;
};

// The boundary of "multipart/byteranges; boundary=X" (quoted or not); ""
// for any other Content-Type.
std::string multipart_boundary(const std::string &content_type);

class MultipartRanges {
 public:
  // parts: in the order asked (servers answer in that order), outliving this.
  MultipartRanges(const std::vector<RangePart> &parts, std::string boundary)
      : parts_(parts), boundary_("--" + std::move(boundary)) {}
  // False, with error(), when the body is not the parts asked for.
  bool feed(const char *data, size_t n);
  // Every part's bytes arrived.
  bool complete() const { return next_ == parts_.size() && state_ != State::kData; }
  const std::string &error() const { return error_; }
  uint64_t data_bytes() const { return data_bytes_; }

 private:
  enum class State { kBoundary, kHeaders, kData, kEnd };
  bool line(const std::string &l);

  const std::vector<RangePart> &parts_;
  const std::string boundary_;
  State state_ = State::kBoundary;
  std::string line_;
  size_t next_ = 0;          // the part expected next
  bool have_range_ = false;  // its Content-Range was seen
  uint64_t got_ = 0;         // bytes of the current part so far
  uint64_t data_bytes_ = 0;
  std::string error_;
};

}  // namespace zt
