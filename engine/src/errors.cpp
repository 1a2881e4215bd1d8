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

void require_rows_within(std::int64_t row_begin, std::int64_t row_end, std::int64_t rows) {
  if (row_begin < 0 || row_end < row_begin || row_end > rows) {
    throw_bad_input("rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                    ") are outside the matrix's " + std::to_string(rows) + " rows");
  }
}

}  // namespace spgemm
