// What the setup passes hold at most (amg/operations.hpp): the bounds both
// implementations keep to, and the estimates of the builder's steps.
#include "amg/operations.hpp"

namespace spgemm::amg {
namespace {

std::size_t csr_bytes(std::int64_t rows, std::int64_t nnz, std::size_t value_bytes) {
  return matrix_info{rows, rows, nnz, value_bytes == 4 ? value_type::f32 : value_type::f64}.bytes();
}

std::size_t words(std::int64_t n) { return static_cast<std::size_t>(n) * 8; }

// The temporary storage of a scan, a radix sort or a reduction (CUB's:
// about a word per thousand items, plus tables), with room to spare.
std::size_t pass_allowance(std::int64_t n) { return (64 << 10) + static_cast<std::size_t>(n); }

}  // namespace

std::size_t strength_bytes(const matrix_info& a, int block_size) {
  const std::int64_t n = a.rows / block_size;
  // The graph (f32 values), and per node its diagonal norm and count.
  return csr_bytes(n, a.nnz / (std::int64_t{block_size} * block_size), 4) + words(2 * n + 1) + pass_allowance(n);
}

std::size_t aggregate_bytes(const matrix_info& graph) {
  const std::int64_t n = graph.rows;
  // The aggregation matrix (one entry a node at most), the keys of a round
  // (three arrays), two sweeps of aggregate numbers, the roots' numbers and
  // a state byte per node.
  return csr_bytes(n, n, 8) + words(3 * n + 1) + words(n) + words(n + 1) + static_cast<std::size_t>(n) +
         pass_allowance(n);
}

std::size_t tentative_bytes(const matrix_info& aggregates, std::int64_t count, int rows_per_node, int columns) {
  const std::int64_t nodes = aggregates.rows;
  const std::int64_t rows = nodes * rows_per_node;
  // T, the coarse near null space, the aggregates' starts and the sort of
  // the nodes by aggregate (keys and nodes, twice).
  return csr_bytes(rows, rows * columns, 8) + words(count * columns * columns) + words(count + 1) +
         words(2 * nodes) + pass_allowance(rows);
}

std::size_t prolongator_bytes(const matrix_info& t, const matrix_info& at) {
  // P on both patterns at most, and the row counts.
  return csr_bytes(t.rows, t.nnz + at.nnz, 8) + words(t.rows + 1) + pass_allowance(t.rows);
}

operations::diagonal_inverses operations::inverse_diagonals(const stored_matrix& a) {
  return {inverse_diagonal(a, false), inverse_diagonal(a, true)};
}

std::size_t factor_bytes(const matrix_info& a) {
  // At most two dense n x n buffers: the GPU's inverse and its two n x 32
  // pivot panels, or the CPU's LU factors.
  return 2 * words(a.rows * a.rows) + pass_allowance(a.rows);
}

}  // namespace spgemm::amg
