// The generators behind spgemm::generate() (engine/include/spgemm/generate.hpp
// documents each spec), and the counter-based random draws they share: every
// draw depends on (seed, item) only, so a result never depends on threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spgemm/csr.hpp"
#include "src/parallel.hpp"

namespace spgemm::generators {

// splitmix64 finalizer.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline double unit_interval(std::uint64_t bits) {  // (0, 1]
  return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// The key of entry (i, j), as keys_to_csr takes it.
inline std::uint64_t entry_key(std::int64_t i, std::int64_t j) {
  return static_cast<std::uint64_t>(i) << 32 | static_cast<std::uint64_t>(j);
}

// A value in (0, 1] that depends on the unordered pair {i, j}: symmetric matrices.
inline double symmetric_unit(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  return unit_interval(mix(seed ^ mix(entry_key(std::min(i, j), std::max(i, j)) + 0x5851f42d4c957f2dull)));
}

// The draws of one item (a row, an edge, a node) of one generator.
class draws {
 public:
  draws(std::uint64_t seed, std::uint64_t item, std::uint64_t salt = 0) : state_(mix(seed ^ mix(item + salt))) {}
  std::uint64_t next() { return state_ = mix(state_); }
  double unit() { return unit_interval(next()); }  // (0, 1]
  // Uniform in [0, n).
  std::int64_t below(std::int64_t n) {
    return static_cast<std::int64_t>(static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0) *
                                     static_cast<double>(n));
  }

 private:
  std::uint64_t state_;
};

// `count` distinct values of [0, width), sorted, in `out` (a uniformly random subset).
void sample_distinct(draws& d, std::int64_t width, std::int64_t count, std::vector<std::int64_t>& out);

// A random permutation of [0, n).
std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed);

// An edge list as CSR: (row << 32 | col) keys in any order (consumed),
// duplicates merged, values zero.
csr_matrix<double> keys_to_csr(std::int64_t rows, std::int64_t cols, std::vector<std::uint64_t> keys);

// m.values[k] = value_of(row, col) for every entry, rows in parallel.
template <typename ValueOf>
void set_values(csr_matrix<double>& m, ValueOf value_of) {
  m.values.resize(m.col_indices.size());
  detail::parallel_slices(m.rows, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) m.values[k] = value_of(r, m.col_indices[k]);
  });
}

// Grids (generate_grids.cpp).
csr_matrix<double> poisson(std::int64_t n, int dims, int points);
csr_matrix<double> elasticity(std::int64_t n);
csr_matrix<double> fem_blocks(std::int64_t n, std::int64_t max_block, std::uint64_t seed);

// Graphs (generate_graphs.cpp).
struct kronecker_params {
  double a, b, c;
};
csr_matrix<double> rmat(std::int64_t scale, std::int64_t edge_factor, std::uint64_t seed);
csr_matrix<double> kronecker(std::int64_t scale, std::int64_t edge_factor, kronecker_params p, std::uint64_t seed);
csr_matrix<double> chung_lu(std::int64_t n, double average_degree, double exponent, std::uint64_t seed);

// Random rows (generate_random.cpp).
csr_matrix<double> random_rows(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed);
csr_matrix<double> random_band(std::int64_t n, std::int64_t half_width, std::int64_t per_row, std::uint64_t seed);
csr_matrix<double> circuit(std::int64_t n, std::int64_t couplings, std::int64_t nets, std::int64_t net_length,
                           std::uint64_t seed);

}  // namespace spgemm::generators
