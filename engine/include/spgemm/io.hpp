// Matrix Market files (.mtx, and .mtx.gz compressed with gzip).
//
// Reads `matrix coordinate` files with `real`, `integer` or `pattern` fields
// (pattern entries get the value 1.0) and `general` or `symmetric` storage
// (symmetric files store one triangle; it is mirrored on read). Entries may
// come in any order; a duplicated entry is rejected. Writes `real general`.
#pragma once

#include <string>

#include "spgemm/csr.hpp"

namespace spgemm {

// Throws error(bad_input) naming the file, the line and the problem.
csr_matrix<double> read_matrix_market(const std::string& path);

// Values are written with enough digits to read back exactly. A path ending
// in `.gz` is compressed.
template <typename T>
void write_matrix_market(const std::string& path, const csr_matrix<T>& m);
void write_matrix_market(const std::string& path, const any_csr& m);

}  // namespace spgemm
