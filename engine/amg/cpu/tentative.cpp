// The tentative prolongator on the CPU: the near null space cut to the
// aggregates, each aggregate's block orthonormalized by modified
// Gram-Schmidt, columns numerically zero (below 1e-10 of their norm before)
// set to zero, as pyamg's fit_candidates does; the factors R are the coarse
// near null space.
#include <cmath>
#include <string>

#include "amg/cpu/passes.hpp"
#include "amg/tentative_rule.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::amg::cpu {

tentative_result tentative(const csr_matrix<double>& aggregates, std::int64_t count, const std::vector<double>& b,
                           int rows_per_node, int columns) {
  const std::int64_t nodes = aggregates.rows;
  const int m = columns;
  const std::int64_t block = std::int64_t{rows_per_node} * m;
  if (static_cast<std::int64_t>(b.size()) != nodes * block) {
    throw_bad_input("tentative: the near null space has " + std::to_string(b.size()) + " values, not " +
                    std::to_string(nodes * rows_per_node) + " x " + std::to_string(m));
  }
  // The members of each aggregate, in node order.
  std::vector<std::int64_t> start(static_cast<std::size_t>(count) + 1, 0);
  for (std::int64_t i = 0; i < nodes; ++i) {
    if (aggregates.row_length(i) > 0) ++start[aggregates.col_indices[aggregates.row_offsets[i]] + 1];
  }
  for (std::int64_t j = 0; j < count; ++j) start[j + 1] += start[j];
  std::vector<std::int64_t> members(static_cast<std::size_t>(start[count]));
  std::vector<std::int64_t> at(start.begin(), start.end() - 1);
  std::vector<std::int64_t> position(static_cast<std::size_t>(nodes), -1);  // of a node among its aggregate's
  for (std::int64_t i = 0; i < nodes; ++i) {
    if (aggregates.row_length(i) == 0) continue;
    const index_t j = aggregates.col_indices[aggregates.row_offsets[i]];
    position[i] = at[j] - start[j];
    members[at[j]++] = i;
  }

  tentative_result out;
  out.coarse.assign(static_cast<std::size_t>(count * m * m), 0.0);
  std::vector<double> q;  // the aggregate's block: its members' rows of B, row-major
  std::vector<std::vector<double>> blocks(static_cast<std::size_t>(count));
  for (std::int64_t j = 0; j < count; ++j) {
    const std::int64_t size = start[j + 1] - start[j];
    q.assign(static_cast<std::size_t>(size * block), 0.0);
    for (std::int64_t p = 0; p < size; ++p) {
      const double* from = b.data() + members[start[j] + p] * block;
      std::copy(from, from + block, q.begin() + p * block);
    }
    double* block_values = q.data();
    orthonormalize([block_values, m](std::int64_t i, int c) -> double& { return block_values[i * m + c]; },
                   size * rows_per_node, m, out.coarse.data() + j * m * m);
    blocks[j] = q;
  }

  csr_matrix<double>& t = out.t;
  t.rows = nodes * rows_per_node;
  t.cols = count * m;
  t.row_offsets.assign(static_cast<std::size_t>(t.rows) + 1, 0);
  for (std::int64_t i = 0; i < nodes; ++i) {
    for (int r = 0; r < rows_per_node; ++r) {
      const std::int64_t row = i * rows_per_node + r;
      if (position[i] >= 0) {
        const index_t j = aggregates.col_indices[aggregates.row_offsets[i]];
        const double* values = blocks[j].data() + position[i] * block + std::int64_t{r} * m;
        for (int c = 0; c < m; ++c) {
          t.col_indices.push_back(static_cast<index_t>(std::int64_t{j} * m + c));
          t.values.push_back(values[c]);
        }
      }
      t.row_offsets[row + 1] = t.nnz();
    }
  }
  return out;
}

}  // namespace spgemm::amg::cpu
