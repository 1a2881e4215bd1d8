// What the setup passes hold at most (amg/operations.hpp): the bounds both
// implementations keep to, and the estimates of the builder's steps; and the
// portable Lanczos recurrence.
#include "amg/operations.hpp"

#include <algorithm>
#include <cmath>

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

void operations::lanczos(const stored_matrix& a, const vector& s, int steps, std::vector<double>& alpha,
                         std::vector<double>& beta) {
  alpha.clear();
  beta.clear();
  const std::int64_t n = s.size();
  const std::int64_t last = std::min<std::int64_t>(steps, n);
  if (last < 1) return;
  auto v = hashed(n);
  auto previous = zeros(n);
  auto u = zeros(n);
  auto w = zeros(n);
  axpby(0.0, *v, 1.0 / std::sqrt(dot(*v, *v)), *v);
  double last_beta = 0;
  for (std::int64_t k = 0; k < last; ++k) {
    scaled_axpby(1.0, s, *v, 0.0, *u);  // u = S v
    spmv(a, *u, 1.0, 0.0, *w);          // w = A S v
    scaled_axpby(1.0, s, *w, 0.0, *w);  // w = S A S v
    const double a_k = dot(*w, *v);
    alpha.push_back(a_k);
    if (k + 1 == last) break;
    axpby(-a_k, *v, 1.0, *w);
    if (k > 0) axpby(-last_beta, *previous, 1.0, *w);
    const double b_k = std::sqrt(std::max(dot(*w, *w), 0.0));
    if (b_k <= 1e-12 * std::abs(a_k)) break;  // an invariant subspace
    beta.push_back(b_k);
    last_beta = b_k;
    std::swap(previous, v);
    axpby(1.0 / b_k, *w, 0.0, *v);
  }
}

std::size_t factor_bytes(const matrix_info& a) {
  // At most two dense n x n buffers: the GPU's inverse and its two n x 32
  // pivot panels, or the CPU's LU factors.
  return 2 * words(a.rows * a.rows) + pass_allowance(a.rows);
}

}  // namespace spgemm::amg
