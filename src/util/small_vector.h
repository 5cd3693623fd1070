// A vector of trivially copyable values that keeps its first N in place.
// Shapes are a handful of dimensions; holding them inline spares the
// allocation (and the free at close) that a std::vector costs per object,
// which adds up when a manifest holds 100 000 objects.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <vector>

namespace zt {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds plain values only");

 public:
  using value_type = T;
  using iterator = T *;
  using const_iterator = const T *;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  SmallVector(const std::vector<T> &v) { assign(v.begin(), v.end()); }  // NOLINT: implicit on purpose
  template <typename It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const SmallVector &o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector &&o) noexcept { take(o); }
  SmallVector &operator=(const SmallVector &o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector &operator=(SmallVector &&o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  SmallVector &operator=(const std::vector<T> &v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ~SmallVector() { release(); }

  template <typename It>
  void assign(It first, It last) {
    clear();
    reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) data()[size_++] = *first;
  }

  T *data() { return heap_ ? heap_ : inline_; }
  const T *data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) { return data()[i]; }
  const T &operator[](size_t i) const { return data()[i]; }
  T &front() { return data()[0]; }
  const T &front() const { return data()[0]; }
  T &back() { return data()[size_ - 1]; }
  const T &back() const { return data()[size_ - 1]; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = std::max(n, capacity_ * 2);
    if (cap > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    T *p = static_cast<T *>(std::malloc(cap * sizeof(T)));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data(), size_ * sizeof(T));
    std::free(heap_);
    heap_ = p;
    capacity_ = cap;
  }
  void push_back(const T &v) {
    if (size_ == capacity_) {
      T copy = v;  // v may live in this vector
      reserve(size_ + 1);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  void resize(size_t n, const T &fill = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = fill;
    size_ = n;
  }

  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVector &a, const SmallVector &b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector &a, const SmallVector &b) { return !(a == b); }
  friend bool operator==(const SmallVector &a, const std::vector<T> &b) {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<T> &a, const SmallVector &b) { return b == a; }

 private:
  void release() {
    std::free(heap_);
    heap_ = nullptr;
    capacity_ = N;
    size_ = 0;
  }
  // Steals o's heap block, or copies its inline values; leaves o empty.
  void take(SmallVector &o) {
    if (o.heap_) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
      o.heap_ = nullptr;
      o.capacity_ = N;
    } else if (o.size_) {
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T *heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = N;
  T inline_[N];
};

}  // namespace zt
