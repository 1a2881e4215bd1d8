// The stored matrices as a caller names them: by handle, within its tenant,
// with the outcomes and messages every front end gives.
#pragma once

#include <cstddef>
#include <string>

#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"

namespace spgemmd::core {

// "rows x cols", for messages.
std::string shape(const spgemm::matrix_info& m);

// Pins the matrix `handle` that request field `field` names: invalid_argument
// where the field is empty, not_found where there is no such matrix.
outcome pin_matrix(matrix_cache& cache, const std::string& tenant, const char* field, const std::string& handle,
                   pin* out);
// What is known of the matrix `handle`.
outcome describe_matrix(matrix_cache& cache, const std::string& tenant, const std::string& handle, entry_info* out);
// New values for the matrix `handle`, its handle and pattern kept
// (matrix_cache::write_values): `values` holds `count` values of `type`,
// which must be the matrix's type and nnz (invalid_argument otherwise);
// does_not_fit where the matrix is in use and no device has room for the copy.
outcome update_values(matrix_cache& cache, const std::string& tenant, const std::string& handle,
                      spgemm::value_type type, int64_t count, const void* values, entry_info* out);
// Deletes the matrix `handle`; `freed` is its bytes (freed now, or when the
// last job using it ends).
outcome delete_matrix(matrix_cache& cache, const std::string& tenant, const std::string& handle, std::size_t* freed);

}  // namespace spgemmd::core
