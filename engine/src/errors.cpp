#include "spgemm/errors.hpp"

namespace spgemm {

const char* to_string(error_kind kind) {
  switch (kind) {
    case error_kind::bad_input: return "bad input";
    case error_kind::does_not_fit: return "does not fit";
    case error_kind::device_failure: return "device failure";
    case error_kind::cancelled: return "cancelled";
  }
  return "unknown";
}

void throw_bad_input(const std::string& message) { throw error(error_kind::bad_input, message); }

}  // namespace spgemm
