// A matrix in host memory as row blocks in order: one block for a matrix
// spilled from a device or uploaded there, several for a product computed in
// row panels and kept (each panel's rows as they came off their device, in
// parallel: no copy puts them together), some of them in a spill file where
// the host budget had no room for them. Immutable once made.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/spill_file.hpp"
#include "spgemm/csr.hpp"

namespace spgemmd::core {

class host_matrix {
 public:
  struct block {
    int64_t first_row = 0;
    std::shared_ptr<const spgemm::any_csr> rows;  // offsets rebased to 0; none where spilled
    std::shared_ptr<const spilled_rows> spilled;  // else in a spill file

    spgemm::matrix_info info() const { return rows ? spgemm::info_of(*rows) : spilled->info(); }
    // Its rows in memory: read back from the file where spilled.
    std::shared_ptr<const spgemm::any_csr> load() const;
  };

  explicit host_matrix(spgemm::any_csr m);
  // Blocks covering rows 0 .. in order, of one value type and column count.
  explicit host_matrix(std::vector<block> blocks);

  const spgemm::matrix_info& info() const { return info_; }
  // What its blocks hold in memory: the matrix's bytes and the first offset of
  // each block but one, less the spilled blocks.
  std::size_t bytes() const;
  const std::vector<block>& blocks() const { return blocks_; }
  // Rows [begin, end) as a matrix of their own (a copy, across blocks).
  spgemm::any_csr rows(int64_t begin, int64_t end) const;
  // The whole as one matrix: its block where it has one in memory, else put
  // together (read back where spilled).
  std::shared_ptr<const spgemm::any_csr> whole() const;

 private:
  std::vector<block> blocks_;
  spgemm::matrix_info info_;
};

}  // namespace spgemmd::core
