// The stored matrices as a caller names them: by handle, among those it sees
// (its tenant's; an admin's: all), with the outcomes and messages every front
// end gives. Another tenant's matrix is not found, as if it did not exist.
#pragma once

#include <cstddef>
#include <string>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"

namespace spgemmd::core {

// "rows x cols", for messages.
std::string shape(const spgemm::matrix_info& m);

// The longest name a matrix may have (bytes of UTF-8).
constexpr std::size_t max_name_bytes = 256;

// invalid_argument where the name in request field `field` is longer than max_name_bytes.
outcome check_name(const char* field, const std::string& name);

// Pins the matrix `handle` that request field `field` names: invalid_argument
// where the field is empty, not_found where there is no such matrix.
outcome pin_matrix(matrix_cache& cache, const caller& who, const char* field, const std::string& handle, pin* out);
// What is known of the matrix `handle`.
outcome describe_matrix(matrix_cache& cache, const caller& who, const std::string& handle, entry_info* out);
// New values for the matrix `handle`, its handle and pattern kept
// (matrix_cache::write_values): `values` holds `count` values of `type`,
// which must be the matrix's type and nnz (invalid_argument otherwise);
// does_not_fit where the matrix is in use and no device has room for the copy.
outcome update_values(matrix_cache& cache, const caller& who, const std::string& handle, spgemm::value_type type,
                      int64_t count, const void* values, entry_info* out);
// Deletes the matrix `handle`; `freed` is its bytes (freed now, or when the
// last job using it ends).
outcome delete_matrix(matrix_cache& cache, const caller& who, const std::string& handle, std::size_t* freed);

}  // namespace spgemmd::core
