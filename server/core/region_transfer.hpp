// Matrices written into a client's shared-memory region, laid out by
// layout_csr in the range the client named: a whole matrix on a GPU by its
// copy engines into the region pinned for them (shm_object::pinned_for),
// else its rows as their backend hands them over (row_blocks::next_to: a
// piece at a time from a GPU's staging buffers), each written with pwrite.
#pragma once

#include <cstdint>

#include "core/outcome.hpp"
#include "core/region_ref.hpp"
#include "core/region_registry.hpp"
#include "core/row_blocks.hpp"
#include "spgemm/csr.hpp"

namespace spgemmd::core {

// The layout of a matrix of `info` where it fits `length` bytes (`fits` says).
outcome layout_of(const spgemm::matrix_info& info, int64_t length, csr_layout* out, bool* fits);

// Writes every row of `rows` into `to` at `layout` (from layout_of, fitting).
// invalid_argument where the object shrank meanwhile; what a fetch throws.
outcome write_rows(row_blocks& rows, const region_span& to, const csr_layout& layout);

}  // namespace spgemmd::core
