// Graph generators: R-MAT and Kronecker graphs, Chung-Lu power-law graphs.
#include <algorithm>
#include <cmath>
#include <utility>

#include "src/generators.hpp"

namespace spgemm::generators {
namespace {

// Edge e of a stochastic Kronecker graph: one quadrant per level, chosen with
// probabilities (a, b, c, d).
std::pair<std::int64_t, std::int64_t> kronecker_edge(std::int64_t scale, kronecker_params p, std::uint64_t seed,
                                                     std::int64_t e) {
  draws d(seed, static_cast<std::uint64_t>(e));
  std::int64_t row = 0, col = 0;
  for (std::int64_t level = 0; level < scale; ++level) {
    const double u = d.unit();
    const std::int64_t down = u > p.a + p.b, right = (u > p.a && u <= p.a + p.b) || u > p.a + p.b + p.c;
    row = (row << 1) | down;
    col = (col << 1) | right;
  }
  return {row, col};
}

// An undirected graph's edges (both directions) as CSR, values symmetric.
csr_matrix<double> undirected(std::int64_t n, std::vector<std::uint64_t> keys, std::uint64_t seed) {
  keys.erase(std::remove(keys.begin(), keys.end(), ~0ull), keys.end());
  csr_matrix<double> m = keys_to_csr(n, n, std::move(keys));
  set_values(m, [seed](std::int64_t i, std::int64_t j) { return symmetric_unit(seed, i, j); });
  return m;
}

}  // namespace

csr_matrix<double> rmat(std::int64_t scale, std::int64_t edge_factor, std::uint64_t seed) {
  const std::int64_t n = std::int64_t{1} << scale;
  const std::int64_t edges = edge_factor * n;
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(edges));
  detail::parallel_slices(edges, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t e = begin; e < end; ++e) {
      const auto [row, col] = kronecker_edge(scale, {0.57, 0.19, 0.19}, seed, e);
      keys[e] = entry_key(row, col);
    }
  });
  csr_matrix<double> m = keys_to_csr(n, n, std::move(keys));
  set_values(m, [seed](std::int64_t i, std::int64_t j) {
    return unit_interval(mix(seed ^ mix(entry_key(i, j) + 0x5851f42d4c957f2dull)));
  });
  return m;
}

csr_matrix<double> kronecker(std::int64_t scale, std::int64_t edge_factor, kronecker_params p, std::uint64_t seed) {
  const std::int64_t n = std::int64_t{1} << scale;
  const std::int64_t edges = edge_factor * n;
  const std::vector<std::int64_t> label = permutation(n, seed);
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(2 * edges), ~0ull);
  detail::parallel_slices(edges, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t e = begin; e < end; ++e) {
      const auto [row, col] = kronecker_edge(scale, p, seed, e);
      if (row == col) continue;
      keys[2 * e] = entry_key(label[row], label[col]);
      keys[2 * e + 1] = entry_key(label[col], label[row]);
    }
  });
  return undirected(n, std::move(keys), seed);
}

// Expected degrees w(x) = (1 + x/s)^-beta, beta = 1/(exponent - 1), over
// x in [0, n) have the degree distribution P(k) ~ k^-exponent. The scale s
// sets the largest against the mean: w(0) / mean(w) = sqrt(n * average) /
// average (the structural cutoff, beyond which w_i w_j / sum(w) would exceed
// 1); a bisection finds it. An end of an edge is vertex floor(x) for x drawn
// with density proportional to w: the integral W(x) of w inverted.
csr_matrix<double> chung_lu(std::int64_t n, double average_degree, double exponent, std::uint64_t seed) {
  const double beta = 1.0 / (exponent - 1.0);
  const bool logarithmic = std::abs(beta - 1.0) < 1e-9;
  const double nd = static_cast<double>(n);
  auto integral = [&](double x, double s) {  // W(x) / s
    return logarithmic ? std::log1p(x / s) : (std::pow(1.0 + x / s, 1.0 - beta) - 1.0) / (1.0 - beta);
  };
  const double target = std::min(std::sqrt(nd * average_degree), nd - 1.0) / average_degree;
  double lo = std::log(1e-9), hi = std::log(1e18);  // log s: a larger s flattens the weights
  for (int i = 0; i < 200 && target > 1.0; ++i) {
    const double mid = 0.5 * (lo + hi), s = std::exp(mid);
    (nd / (s * integral(nd, s)) > target ? lo : hi) = mid;  // w(0) / mean(w)
  }
  const double s = target > 1.0 ? std::exp(hi) : 1e300;
  const double total = integral(nd, s);
  auto vertex = [&](double u) {  // x with W(x) = u W(n)
    const double y = u * total;
    const double x = logarithmic ? s * std::expm1(y) : s * (std::pow(1.0 + y * (1.0 - beta), 1.0 / (1.0 - beta)) - 1.0);
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(x), 0, n - 1);
  };

  const std::vector<std::int64_t> label = permutation(n, seed);
  const auto edges = static_cast<std::int64_t>(std::llround(nd * average_degree / 2));
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(2 * edges), ~0ull);
  detail::parallel_slices(edges, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t e = begin; e < end; ++e) {
      draws d(seed, static_cast<std::uint64_t>(e), 0x6368756e676c75ull);
      const std::int64_t i = vertex(d.unit()), j = vertex(d.unit());
      if (i == j) continue;
      keys[2 * e] = entry_key(label[i], label[j]);
      keys[2 * e + 1] = entry_key(label[j], label[i]);
    }
  });
  return undirected(n, std::move(keys), seed);
}

}  // namespace spgemm::generators
