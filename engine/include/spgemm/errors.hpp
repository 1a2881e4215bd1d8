// The few kinds of failure the engine reports. Every engine error is a
// `spgemm::error`; callers switch on `kind()` (the server maps each kind to
// one gRPC status code in one place).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace spgemm {

enum class error_kind {
  bad_input,       // malformed matrix, mismatched shapes, unknown name: the caller must fix it
  does_not_fit,    // the job needs more memory than the device (or budget) has
  device_failure,  // a CUDA call or kernel failed
  cancelled,       // the caller's cancel token fired; everything the job held is freed
};

const char* to_string(error_kind kind);

class error : public std::runtime_error {
 public:
  error(error_kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  error_kind kind() const { return kind_; }

 private:
  error_kind kind_;
};

[[noreturn]] void throw_bad_input(const std::string& message);

// error(bad_input) unless rows [row_begin, row_end) lie within a matrix of `rows` rows.
void require_rows_within(std::int64_t row_begin, std::int64_t row_end, std::int64_t rows);

}  // namespace spgemm
