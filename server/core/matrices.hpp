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

// Pins the matrix `handle` that request field `field` names: invalid_argument
// where the field is empty, not_found where there is no such matrix.
outcome pin_matrix(matrix_cache& cache, const caller& who, const char* field, const std::string& handle, pin* out);
// What is known of the matrix `handle`.
outcome describe_matrix(matrix_cache& cache, const caller& who, const std::string& handle, entry_info* out);
// Deletes the matrix `handle`; `freed` is its bytes (freed now, or when the
// last job using it ends).
outcome delete_matrix(matrix_cache& cache, const caller& who, const std::string& handle, std::size_t* freed);

}  // namespace spgemmd::core
