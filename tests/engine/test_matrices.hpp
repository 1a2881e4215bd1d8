// Seeded random matrices and the shared-matrix folder, for the engine's tests.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spgemm/csr.hpp"

namespace spgemm::testing {

// A rows x cols matrix whose row r has row_length(r, rng) distinct random
// columns (capped at cols) and values uniform in [-1, -0.1] U [0.1, 1].
template <typename T, typename RowLength>
csr_matrix<T> random_csr_rows(std::int64_t rows, std::int64_t cols, std::uint64_t seed, RowLength row_length) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  csr_matrix<T> m;
  m.rows = rows;
  m.cols = cols;
  std::vector<index_t> all(static_cast<std::size_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c) all[c] = static_cast<index_t>(c);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = std::min<std::int64_t>(cols, row_length(r, rng));
    std::vector<index_t> picked;
    if (n * 4 > cols) {  // dense-ish row: shuffle a prefix
      std::shuffle(all.begin(), all.end(), rng);
      picked = std::vector<index_t>(all.begin(), all.begin() + n);
    } else {
      std::uniform_int_distribution<index_t> column(0, static_cast<index_t>(cols - 1));
      while (static_cast<std::int64_t>(picked.size()) < n) {  // draw what is missing, drop repeats
        for (std::int64_t missing = n - static_cast<std::int64_t>(picked.size()); missing > 0; --missing) {
          picked.push_back(column(rng));
        }
        std::sort(picked.begin(), picked.end());
        picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
      }
    }
    std::sort(picked.begin(), picked.end());
    for (const index_t c : picked) {
      m.col_indices.push_back(c);
      const double v = magnitude(rng);
      m.values.push_back(static_cast<T>(rng() & 1 ? v : -v));
    }
    m.row_offsets.push_back(static_cast<offset_t>(m.col_indices.size()));
  }
  return m;
}

// Row lengths uniform in [0, max_length].
template <typename T>
csr_matrix<T> random_csr(std::int64_t rows, std::int64_t cols, std::int64_t max_length, std::uint64_t seed) {
  return random_csr_rows<T>(rows, cols, seed, [max_length](std::int64_t, std::mt19937_64& rng) {
    return std::uniform_int_distribution<std::int64_t>(0, max_length)(rng);
  });
}

// Row r has `lengths[r % lengths.size()]` entries (capped at cols).
template <typename T>
csr_matrix<T> with_lengths(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> lengths,
                           std::uint64_t seed) {
  return random_csr_rows<T>(rows, cols, seed, [lengths](std::int64_t r, std::mt19937_64&) {
    return lengths[static_cast<std::size_t>(r) % lengths.size()];
  });
}

// A rows x cols matrix without entries.
template <typename T>
csr_matrix<T> empty_csr(std::int64_t rows, std::int64_t cols) {
  csr_matrix<T> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
  return m;
}

// The same structure with seeded random values (pattern files carry only 1.0).
template <typename T>
csr_matrix<T> with_random_values(csr_matrix<T> m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(0.1, 1.0);
  for (auto& v : m.values) v = static_cast<T>(rng() & 1 ? value(rng) : -value(rng));
  return m;
}

// The same structure with small integer values, zeros and ties among them
// (so that min, max and the logical operators of a semiring meet equal
// operands and false ones).
template <typename T>
csr_matrix<T> with_small_integers(csr_matrix<T> m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto& v : m.values) v = static_cast<T>(static_cast<int>(rng() % 9) - 3);
  return m;
}

// Every entry of `pattern` as a dense b x b block of random values (as
// random_csr_rows draws them): rows b I .. b I + b - 1 of the result hold
// the blocks of row I of the pattern, node-major (row = b * I + r, column
// b * J + c), the structure planner/block_structure.hpp calls b-blocked.
template <typename T, typename U>
csr_matrix<T> with_dense_blocks(const csr_matrix<U>& pattern, int b, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  csr_matrix<T> m;
  m.rows = pattern.rows * b;
  m.cols = pattern.cols * b;
  for (std::int64_t i = 0; i < pattern.rows; ++i) {
    for (int r = 0; r < b; ++r) {
      for (offset_t k = pattern.row_offsets[i]; k < pattern.row_offsets[i + 1]; ++k) {
        for (int c = 0; c < b; ++c) {
          m.col_indices.push_back(static_cast<index_t>(pattern.col_indices[k] * b + c));
          const double v = magnitude(rng);
          m.values.push_back(static_cast<T>(rng() & 1 ? v : -v));
        }
      }
      m.row_offsets.push_back(static_cast<offset_t>(m.col_indices.size()));
    }
  }
  return m;
}

// A random b-blocked matrix: a random pattern of block_rows x block_cols
// blocks, block rows of 0 .. max_blocks blocks (empty block rows among them).
template <typename T>
csr_matrix<T> random_blocked(std::int64_t block_rows, std::int64_t block_cols, int b, std::int64_t max_blocks,
                             std::uint64_t seed) {
  return with_dense_blocks<T>(random_csr<T>(block_rows, block_cols, max_blocks, seed), b, seed + 1);
}

// The *.mtx.gz files of the shared folder (SPGEMM_MATRICES, else the build's
// default). Empty when the folder is absent; fails the test instead when
// SPGEMM_REQUIRE_MATRICES=1 (CI sets it, so CI never skips these silently).
inline std::vector<std::string> shared_matrix_files() {
  const char* env = std::getenv("SPGEMM_MATRICES");
  const std::filesystem::path dir = env && *env ? env : SPGEMM_DEFAULT_MATRICES;
  std::vector<std::string> files;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().string();
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".mtx.gz") == 0) files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());
  const char* require = std::getenv("SPGEMM_REQUIRE_MATRICES");
  if (files.empty() && require && std::string(require) == "1") {
    ADD_FAILURE() << "no shared matrices in " << dir << " but SPGEMM_REQUIRE_MATRICES=1";
  }
  return files;
}

}  // namespace spgemm::testing
