// Random generators with given row lengths (uniform, banded, tall), the
// circuit-like matrices, and the helpers every random generator shares.
#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <utility>

#include "src/generators.hpp"

namespace spgemm::generators {

void sample_distinct(draws& d, std::int64_t width, std::int64_t count, std::vector<std::int64_t>& out) {
  out.clear();
  if (2 * count >= width) {
    // Selection sampling (Knuth's algorithm S): one pass over a small range.
    for (std::int64_t i = 0, needed = count; i < width && needed > 0; ++i)
      if (d.below(width - i) < needed) {
        out.push_back(i);
        --needed;
      }
    return;
  }
  // Draw what is missing until `count` distinct values are there: every
  // subset of that size stays equally likely.
  while (static_cast<std::int64_t>(out.size()) < count) {
    for (auto missing = count - static_cast<std::int64_t>(out.size()); missing > 0; --missing)
      out.push_back(d.below(width));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  draws d(seed, 0, 0x7065726d75746531ull);
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[d.below(i + 1)]);
  return p;
}

csr_matrix<double> keys_to_csr(std::int64_t rows, std::int64_t cols, std::vector<std::uint64_t> keys) {
  const int threads = detail::resolve_threads(0);
  const auto n_keys = static_cast<std::int64_t>(keys.size());
  // Counting sort by row (the order within a row comes from sorting it after).
  std::unique_ptr<std::atomic<offset_t>[]> count(new std::atomic<offset_t>[rows + 1]);
  for (std::int64_t r = 0; r <= rows; ++r) count[r].store(0, std::memory_order_relaxed);
  detail::parallel_slices(n_keys, threads, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) count[(keys[k] >> 32) + 1].fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<offset_t> start(static_cast<std::size_t>(rows + 1), 0);
  for (std::int64_t r = 0; r < rows; ++r) start[r + 1] = start[r] + count[r + 1].load(std::memory_order_relaxed);
  for (std::int64_t r = 0; r < rows; ++r) count[r].store(start[r], std::memory_order_relaxed);
  std::vector<index_t> scattered(static_cast<std::size_t>(n_keys));
  detail::parallel_slices(n_keys, threads, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k)
      scattered[count[keys[k] >> 32].fetch_add(1, std::memory_order_relaxed)] =
          static_cast<index_t>(keys[k] & 0xffffffffu);
  });
  keys = {};
  // Sort and deduplicate each row, then close the gaps.
  std::vector<offset_t> length(static_cast<std::size_t>(rows), 0);
  detail::parallel_slices(rows, threads, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const auto first = scattered.begin() + start[r], last = scattered.begin() + start[r + 1];
      std::sort(first, last);
      length[r] = std::unique(first, last) - first;
    }
  });
  csr_matrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(static_cast<std::size_t>(rows + 1), 0);
  for (std::int64_t r = 0; r < rows; ++r) m.row_offsets[r + 1] = m.row_offsets[r] + length[r];
  m.col_indices.resize(static_cast<std::size_t>(m.row_offsets[rows]));
  detail::parallel_slices(rows, threads, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      std::copy_n(scattered.begin() + start[r], length[r], m.col_indices.begin() + m.row_offsets[r]);
  });
  m.values.assign(m.col_indices.size(), 0.0);
  return m;
}

csr_matrix<double> random_rows(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed) {
  csr_matrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.resize(static_cast<std::size_t>(rows + 1));
  for (std::int64_t r = 0; r <= rows; ++r) m.row_offsets[r] = r * per_row;
  m.col_indices.resize(static_cast<std::size_t>(rows * per_row));
  m.values.resize(m.col_indices.size());
  detail::parallel_slices(rows, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> picked;
    for (std::int64_t r = begin; r < end; ++r) {
      draws d(seed, static_cast<std::uint64_t>(r));
      sample_distinct(d, cols, per_row, picked);
      for (std::int64_t k = 0; k < per_row; ++k) {
        m.col_indices[r * per_row + k] = static_cast<index_t>(picked[k]);
        m.values[r * per_row + k] = d.unit();
      }
    }
  });
  return m;
}

csr_matrix<double> random_band(std::int64_t n, std::int64_t half_width, std::int64_t per_row, std::uint64_t seed) {
  auto window = [&](std::int64_t r) {
    return std::pair{std::max<std::int64_t>(0, r - half_width), std::min(n - 1, r + half_width)};
  };
  csr_matrix<double> m;
  m.rows = m.cols = n;
  m.row_offsets.assign(static_cast<std::size_t>(n + 1), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    const auto [lo, hi] = window(r);
    m.row_offsets[r + 1] = m.row_offsets[r] + std::min(per_row, hi - lo + 1);
  }
  m.col_indices.resize(static_cast<std::size_t>(m.row_offsets[n]));
  m.values.resize(m.col_indices.size());
  detail::parallel_slices(n, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> picked;
    for (std::int64_t r = begin; r < end; ++r) {
      const auto [lo, hi] = window(r);
      draws d(seed, static_cast<std::uint64_t>(r));
      // The others from the window without the diagonal, then the diagonal in its place.
      sample_distinct(d, hi - lo, m.row_length(r) - 1, picked);
      for (auto& c : picked) c += lo + (lo + c >= r ? 1 : 0);
      picked.insert(std::upper_bound(picked.begin(), picked.end(), r), r);
      for (std::size_t k = 0; k < picked.size(); ++k) {
        m.col_indices[m.row_offsets[r] + k] = static_cast<index_t>(picked[k]);
        m.values[m.row_offsets[r] + k] = d.unit();
      }
    }
  });
  return m;
}

csr_matrix<double> circuit(std::int64_t n, std::int64_t couplings, std::int64_t nets, std::int64_t net_length,
                           std::uint64_t seed) {
  constexpr std::uint64_t none = ~0ull;
  constexpr std::int64_t near = 64;
  const std::int64_t edges = n * couplings / 2;
  net_length = std::min(net_length, n);
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(2 * edges + 2 * nets * net_length + n), none);
  detail::parallel_slices(edges, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t e = begin; e < end; ++e) {
      draws d(seed, static_cast<std::uint64_t>(e), 0x636f75706c65ull);
      const std::int64_t i = d.below(n);
      std::int64_t j = d.below(n);
      if (d.below(2) == 0) {  // a neighbour within `near`, reflected at the borders
        const std::int64_t step = 1 + d.below(near);
        j = d.below(2) ? i + step : i - step;
        if (j < 0 || j >= n) j = 2 * i - j;
      }
      if (i == j || j < 0 || j >= n) continue;
      keys[2 * e] = entry_key(i, j);
      keys[2 * e + 1] = entry_key(j, i);
    }
  });
  std::vector<std::int64_t> hubs, partners;
  draws pick(seed, 0, 0x6e657473ull);
  sample_distinct(pick, n, std::min(nets, n), hubs);
  auto at = keys.begin() + 2 * edges;
  for (std::size_t h = 0; h < hubs.size(); ++h) {
    draws d(seed, h, 0x6e65746c696e6bull);
    sample_distinct(d, n, net_length, partners);
    for (const std::int64_t j : partners) {
      if (j == hubs[h]) continue;
      *at++ = entry_key(hubs[h], j);
      *at++ = entry_key(j, hubs[h]);
    }
  }
  for (std::int64_t i = 0; i < n; ++i) *at++ = entry_key(i, i);
  keys.erase(std::remove(keys.begin(), keys.end(), none), keys.end());

  csr_matrix<double> m = keys_to_csr(n, n, std::move(keys));
  // Negative couplings, symmetric; the diagonal 1 + the sum of their sizes.
  set_values(m, [&](std::int64_t i, std::int64_t j) {
    return i == j ? 0.0 : -symmetric_unit(seed, i, j);
  });
  detail::parallel_slices(n, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      double sum = 1.0;
      offset_t diagonal = 0;
      for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
        sum -= m.values[k];
        if (m.col_indices[k] == r) diagonal = k;
      }
      m.values[diagonal] = sum;
    }
  });
  return m;
}

}  // namespace spgemm::generators
