// The tensors of a foreign file that are not in the file as they are read
// (.npz members, Fortran-order arrays): decoded on their first read, never
// at open, so opening and listing such a file inflate nothing (issue 37.6,
// docs/foreign.md "Decoded on first read").
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "container/source.h"

namespace zt {

class DecodeOnReadSource final : public Source {
 public:
  struct Tensor {
    std::string name;
    uint64_t at = 0;      // offset in this source (64-byte aligned, increasing)
    uint64_t nbytes = 0;  // exactly what emit delivers
    // Delivers the bytes in pieces; throws zt::Error on a
    // malformed input (then reported as ZT_E_FORMAT).
    std::function<void(const std::function<void(const void *, size_t)> &)> emit;
  };
  struct Budget {
    uint64_t per_tensor;  // max_decoded_size: one tensor
    uint64_t total;       // all tensors of the file together
    std::string rule;     // how `total` was set, for messages
  };
  // `inputs` keeps alive what the emit functions read (the file's map, the
  // zip archive); released after them. Reserves `size` bytes of address
  // space, inaccessible (no memory is committed, nothing counts against
  // RLIMIT_DATA) until a tensor is decoded into it.
  DecodeOnReadSource(const std::string &path, uint64_t size, std::vector<Tensor> tensors, Budget budget,
                     std::shared_ptr<void> inputs);
  ~DecodeOnReadSource() override;
  DecodeOnReadSource(const DecodeOnReadSource &) = delete;
  DecodeOnReadSource &operator=(const DecodeOnReadSource &) = delete;

  void read(uint64_t offset, size_t len, void *dst) const override;
  const uint8_t *read_meta(uint64_t offset, size_t len, std::vector<uint8_t> &scratch) const override;
  // Decodes every tensor [offset, offset+len) touches that is not decoded
  // yet. Thread-safe; decodes run one at a time (a zip archive serves one
  // reader at a time). Throws zt::Error: ZT_E_LIMIT past the budget,
  // ZT_E_FORMAT for a member that does not decode (every later read of it
  // fails the same way), ZT_E_NOMEM.
  void materialize(uint64_t offset, uint64_t len) const override;
  // Bytes decoded so far (tests).
  uint64_t decoded_bytes() const;

 private:
  enum State : uint8_t { kPending, kReady, kFailed };
  void decode(size_t i) const;
  // Decodes tensor i into dst (its nbytes) without keeping it; false when
  // it is no longer pending.
  bool decode_into(size_t i, uint8_t *dst) const;
  void protect(uint64_t at, uint64_t len, bool writable) const;

  std::shared_ptr<void> inputs_;  // declared first: destroyed after tensors_
  std::vector<Tensor> tensors_;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  mutable std::vector<std::string> failure_;  // the message of each kFailed tensor
  mutable std::mutex mu_;                     // one decode at a time; guards failure_ and spent_
  mutable uint64_t spent_ = 0;
  Budget budget_;
  uint8_t *base_ = nullptr;
};

}  // namespace zt
