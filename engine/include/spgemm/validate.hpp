// CSR validation: names the first problem found, in words a user can act on.
#pragma once

#include <string>
#include <string_view>

#include "spgemm/csr.hpp"

namespace spgemm {

struct validate_options {
  bool allow_non_finite = true;  // false: NaN or infinite values are a problem
};

// The first problem of `m`, or an empty string when `m` is a valid CSR matrix:
// wrong array lengths, row offsets not starting at 0 or decreasing, a column
// out of range, columns unsorted or duplicated within a row, non-finite values
// (where forbidden), a shape that does not fit the index types.
template <typename T>
std::string find_csr_problem(const csr_matrix<T>& m, const validate_options& options = {});

// Throws error(bad_input, "<what>: <problem>") when `m` is not valid.
template <typename T>
void require_valid(const csr_matrix<T>& m, std::string_view what, const validate_options& options = {});
void require_valid(const any_csr& m, std::string_view what, const validate_options& options = {});

}  // namespace spgemm
