// The one exception type of the core: a status plus a message that names the
// rule, the object, the component and the offset involved. The C ABI guard
// turns it into a zt_status and the thread-local detail message.
#pragma once

#include <stdexcept>
#include <string>

#include "internal/internal_api.h"
#include "util/utf8.h"  // valid_utf8, which every name check beside fail() uses
#include "ztensor.h"

namespace zt {

// ZT_INTERNAL: one type_info for the library and the zt tool, which catches
// what the foreign importers throw (src/internal/internal_api.h).
class ZT_INTERNAL Error : public std::runtime_error {
 public:
  Error(zt_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  zt_status status() const noexcept { return status_; }

 private:
  zt_status status_;
};

[[noreturn]] inline void fail(zt_status status, const std::string &message) {
  throw Error(status, message);
}

// "object 'w', component 'data'" — the context prefix every message uses.
std::string where(const std::string &object, const std::string &role = {});

// Printable form of a name (escapes control bytes and invalid UTF-8).
std::string printable(const std::string &s);

}  // namespace zt
