#include "io/multipart.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace zt {

namespace {

constexpr size_t kMaxLine = size_t{8} << 10;

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string multipart_boundary(const std::string &content_type) {
  const std::string ct = lower(content_type);
  if (ct.compare(0, 20, "multipart/byteranges") != 0) return "";
  const size_t at = ct.find("boundary=");
  if (at == std::string::npos) return "";
  std::string b = content_type.substr(at + 9);
  if (!b.empty() && b[0] == '"') {
    const size_t end = b.find('"', 1);
    b = end == std::string::npos ? "" : b.substr(1, end - 1);
  } else {
    b = b.substr(0, b.find_first_of("; \t\r\n"));
  }
  return b.size() <= 70 ? b : "";  // RFC 2046: at most 70 characters
}

bool MultipartRanges::line(const std::string &l) {
  if (state_ == State::kBoundary) {
    if (l.empty()) return true;  // the CRLF that ends a part's bytes
    if (l == boundary_ + "--") {
      state_ = State::kEnd;
      if (next_ != parts_.size()) error_ = "the multipart body ended after " + std::to_string(next_) + " parts";
      return error_.empty();
    }
    if (l != boundary_) {
      error_ = "the multipart body has no boundary where one belongs";
      return false;
    }
    if (next_ >= parts_.size()) {
      error_ = "the multipart body has more parts than the " + std::to_string(parts_.size()) + " ranges asked";
      return false;
    }
    state_ = State::kHeaders;
    have_range_ = false;
    return true;
  }
  // kHeaders
  if (l.empty()) {
    if (!have_range_) {
      error_ = "a multipart part has no Content-Range";
      return false;
    }
    state_ = State::kData;
    got_ = 0;
    return true;
  }
  const size_t colon = l.find(':');
  if (colon != std::string::npos && lower(l.substr(0, colon)) == "content-range") {
    unsigned long long a = 0, b = 0;
    const RangePart &p = parts_[next_];
    if (std::sscanf(l.c_str() + colon + 1, " bytes %llu-%llu/", &a, &b) != 2 || a != p.offset ||
        b + 1 != p.offset + p.len) {
      error_ = "a multipart part is not the range asked for (" + l.substr(colon + 1) + "; asked bytes " +
               std::to_string(p.offset) + "-" + std::to_string(p.offset + p.len - 1) + ")";
      return false;
    }
    have_range_ = true;
  }
  return true;
}

bool MultipartRanges::feed(const char *data, size_t n) {
  if (!error_.empty()) return false;
  while (n) {
    if (state_ == State::kEnd) return true;  // the epilogue is ignored
    if (state_ == State::kData) {
      const RangePart &p = parts_[next_];
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n, p.len - got_));
      std::memcpy(p.dst + got_, data, take);
      got_ += take;
      data_bytes_ += take;
      data += take;
      n -= take;
      if (got_ == p.len) {
        ++next_;
        state_ = State::kBoundary;
      }
      continue;
    }
    const char *nl = static_cast<const char *>(std::memchr(data, '\n', n));
    const size_t upto = nl ? static_cast<size_t>(nl - data) : n;
    if (line_.size() + upto > kMaxLine) {
      error_ = "a multipart header line is longer than 8 KiB";
      return false;
    }
    line_.append(data, upto);
    if (!nl) return true;
    data += upto + 1;
    n -= upto + 1;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    const std::string l = std::move(line_);
    line_.clear();
    if (!line(l)) return false;
  }
  return true;
}

}  // namespace zt
