// The checks a reference into a client's shared-memory region passes before
// the server reads or writes a byte of it, and where a matrix's arrays go in a
// range it writes into. Pure functions of numbers and names, so that they are
// easy to fuzz (tests/core/region_ref_test.cpp); region_registry applies them.
#pragma once

#include <cstdint>
#include <string>

#include "core/outcome.hpp"

namespace spgemmd::core {

// Bytes [offset, offset + length) of a region of `region_size` bytes, for
// elements of `alignment` bytes (a power of two): invalid_argument unless both
// are non-negative multiples of `alignment` and the range lies within the
// region. `what` names the reference in the message ("col_indices").
outcome check_range(int64_t region_size, int64_t offset, int64_t length, int64_t alignment, const std::string& what);

// A region's name as its client gives it: 1-128 of [A-Za-z0-9._-].
outcome check_region_name(const std::string& name);
// A POSIX shared-memory object's name (shm_open): an optional leading '/',
// then 1-255 of [A-Za-z0-9._-], not "." or "..": never a path elsewhere.
outcome check_object_key(const std::string& key);

// Where a CSR matrix's arrays go in a range the server writes it into: row
// offsets at its start, columns and values each at the next multiple of 64
// bytes (relative to the range). `bytes` is what the range must hold.
struct csr_layout {
  int64_t row_offsets = 0, col_indices = 0, values = 0;
  int64_t bytes = 0;
};
// The layout of a rows x ? matrix with `nnz` entries of `value_size` bytes;
// invalid_argument where a size is negative or the total overflows.
outcome layout_csr(int64_t rows, int64_t nnz, int64_t value_size, csr_layout* out);

}  // namespace spgemmd::core
