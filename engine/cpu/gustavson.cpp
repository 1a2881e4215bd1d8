// Gustavson's row-wise SpGEMM on the CPU: the test oracle and the CPU backend.
//
// Two passes over the rows of A, each split across threads into slices of
// about equal work (scalar products): a symbolic pass counts the distinct
// columns of each output row with a per-thread marker array, a prefix sum
// places the rows, and a numeric pass accumulates each row in a per-thread
// dense array, then puts its columns in order (a scan of a bit per column
// where their span is narrow enough, else a sort). Accumulation follows the
// order of A's entries and B's entries, so the result is independent of the
// thread count.
// Over a semiring, an entry is its first product, then add(.., product) for
// each next one: GraphBLAS's values. With a mask, the row's markers start
// from M's row (the columns it allows, or those it forbids): a product
// outside the mask is dropped at its marker, never accumulated.
// Workspace: 8 bytes x (rows(A) + 1) of work, and per slice 8 bytes x cols(B)
// of markers (symbolic) or (8 + value) bytes x cols(B) of markers and
// accumulators and a bit per column (numeric). Time: O(products + nnz(M) +
// nnz(C) log) at most; a row's ordering costs its span / 64 where that is less
// than 4 words a column.
#include "cpu/gustavson.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include "spgemm/errors.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/reference.hpp"
#include "semiring/semiring_ops.hpp"
#include "src/huge_pages.hpp"
#include "src/parallel.hpp"

namespace spgemm {
namespace cpu {
namespace {

// Work (products, and a unit per row) below which a slice is not worth a
// thread: the threads live for one pass, and starting one costs tens of
// microseconds, as much as this work.
inline constexpr std::int64_t slice_min_work = std::int64_t{1} << 15;

// Row boundaries splitting the rows of A into at most `parts` slices of about
// equal products, each of at least slice_min_work (one slice for a small
// product): bounds.size() - 1 slices.
template <typename T>
std::vector<std::int64_t> balanced_slices(const csr_matrix<T>& a, const csr_matrix<T>& b, int parts) {
  std::vector<std::int64_t> work(static_cast<std::size_t>(a.rows) + 1, 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::int64_t w = 1;
    for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) w += b.row_length(a.col_indices[k]);
    work[r + 1] = work[r] + w;
  }
  parts = static_cast<int>(std::clamp<std::int64_t>(work.back() / slice_min_work, 1, parts));
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(parts) + 1, a.rows);
  bounds[0] = 0;
  for (int p = 1; p < parts; ++p) {
    const std::int64_t target = work.back() * p / parts;
    bounds[p] = std::lower_bound(work.begin(), work.end(), target) - work.begin();
    bounds[p] = std::clamp(bounds[p], bounds[p - 1], a.rows);
  }
  return bounds;
}

// The numeric pass's arrays of one slice: a marker and an accumulator per
// column of B, and a bit per column (order_columns).
std::size_t slice_accumulator_bytes(std::int64_t b_cols, std::size_t value_bytes) {
  const auto cols = static_cast<std::size_t>(b_cols);
  return cols * (sizeof(std::int64_t) + value_bytes) + (cols + 63) / 64 * sizeof(std::uint64_t);
}

}  // namespace

int gustavson_parts(std::int64_t a_rows, int threads) {
  return static_cast<int>(
      std::clamp<std::int64_t>(detail::resolve_threads(threads), 1, std::max<std::int64_t>(a_rows, 1)));
}

std::size_t gustavson_workspace_bytes(std::int64_t a_rows, std::int64_t b_cols, std::size_t value_bytes, int threads) {
  const int parts = gustavson_parts(a_rows, threads);
  return static_cast<std::size_t>(a_rows + 1) * sizeof(std::int64_t) +
         static_cast<std::size_t>(parts + 1) * sizeof(std::int64_t) +
         gustavson_accumulator_bytes(b_cols, value_bytes, parts);
}

std::size_t gustavson_accumulator_bytes(std::int64_t b_cols, std::size_t value_bytes, int parts) {
  return static_cast<std::size_t>(detail::resolve_threads(parts)) * slice_accumulator_bytes(b_cols, value_bytes);
}

namespace {

// How a row's markers start: every column open (no mask), only M's columns
// (C<M>), or every column but M's (C<!M>). A marker holds 2r (open: M's
// entry, row r) or 2r + 1 (the column has its first product in row r).
enum class mask_mode { none, allow, forbid };

template <mask_mode Mode>
bool opens(std::int64_t mark, std::int64_t open) {
  if constexpr (Mode == mask_mode::none) {
    return true;
  } else if constexpr (Mode == mask_mode::allow) {
    return mark == open;
  } else {
    return mark != open;
  }
}

// A row of C of at least scan_min_columns columns puts them in order from a
// bit per column of B where their span holds at most scan_words_per_column
// 64-bit words per column (a scan of the words), else by sorting them:
// soc-Epinions1 squared spent a third of its time in std::sort. Shorter rows
// sort as fast as they would find their span.
inline constexpr std::int64_t scan_min_columns = 32;
inline constexpr std::int64_t scan_words_per_column = 4;

// Puts a row's `count` columns (distinct, in the order of their first
// products) in ascending order; `bits` (a word per 64 columns of B, zero)
// is zero again after.
void order_columns(index_t* cols, std::int64_t count, std::uint64_t* bits) {
  if (count < scan_min_columns) {
    std::sort(cols, cols + count);
    return;
  }
  const auto [lo, hi] = std::minmax_element(cols, cols + count);
  const std::int64_t first = *lo >> 6;
  const std::int64_t last = *hi >> 6;
  if (last - first + 1 > scan_words_per_column * count) {
    std::sort(cols, cols + count);
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) bits[cols[i] >> 6] |= std::uint64_t{1} << (cols[i] & 63);
  std::int64_t n = 0;
  for (std::int64_t w = first; w <= last; ++w) {
    for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) {
      cols[n++] = static_cast<index_t>(w * 64 + __builtin_ctzll(word));
    }
    bits[w] = 0;
  }
}

template <mask_mode Mode>
void mark_mask_row(const mask_rows& mask, std::int64_t r, std::vector<std::int64_t>& marker) {
  if constexpr (Mode != mask_mode::none) {
    for (offset_t k = mask.offsets[r]; k < mask.offsets[r + 1]; ++k) {
      if (mask.counts(k)) marker[mask.cols[k]] = 2 * r;
    }
  }
}

template <typename T, typename Ops, mask_mode Mode>
csr_matrix<T> gustavson_rows(const csr_matrix<T>& a, const csr_matrix<T>& b, const Ops ring, const mask_rows& mask,
                             int threads, job_memory& memory, const cancel_token& cancel) {
  // Work (scalar products, and a unit per row) between two looks at the
  // cancel token: about a millisecond, however the rows are sized.
  constexpr std::int64_t poll_work = 1 << 20;
  const int parts = gustavson_parts(a.rows, threads);
  const auto offsets = static_cast<std::size_t>(a.rows) + 1;
  const auto per_part = static_cast<std::size_t>(parts) * static_cast<std::size_t>(b.cols);
  const job_memory::hold slicing(memory, (offsets + static_cast<std::size_t>(parts) + 1) * sizeof(std::int64_t));
  const auto bounds = balanced_slices(a, b, parts);
  const int slices = static_cast<int>(bounds.size()) - 1;
  const job_memory::hold c_offsets(memory, offsets * sizeof(offset_t));
  csr_matrix<T> c;
  c.rows = a.rows;
  c.cols = b.cols;
  c.row_offsets.assign(offsets, 0);

  {  // symbolic pass: a marker per column of B and slice
    const job_memory::hold markers(memory, per_part * sizeof(std::int64_t));
    detail::parallel_slices(slices, slices, [&](int, std::int64_t p, std::int64_t) {
      std::vector<std::int64_t> marker(static_cast<std::size_t>(b.cols), -1);
      std::int64_t work = 0;
      for (std::int64_t r = bounds[p]; r < bounds[p + 1]; ++r) {
        if (work >= poll_work) {
          cancel.throw_if_cancelled();
          work = 0;
        }
        const std::int64_t open = 2 * r;
        const std::int64_t done = open + 1;
        mark_mask_row<Mode>(mask, r, marker);
        std::int64_t count = 0;
        ++work;
        for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
          const index_t j = a.col_indices[k];
          work += b.row_offsets[j + 1] - b.row_offsets[j];
          for (offset_t l = b.row_offsets[j]; l < b.row_offsets[j + 1]; ++l) {
            std::int64_t& mark = marker[b.col_indices[l]];
            if (mark != done && opens<Mode>(mark, open)) {
              mark = done;
              ++count;
            }
          }
        }
        c.row_offsets[r + 1] = count;
      }
    });
  }
  std::partial_sum(c.row_offsets.begin(), c.row_offsets.end(), c.row_offsets.begin());
  const auto nnz = static_cast<std::size_t>(c.row_offsets.back());
  const job_memory::hold entries(memory, nnz * (sizeof(index_t) + sizeof(T)));
  // The resizes write all of C on one thread: in huge pages, not a fault per 4 KiB.
  reserve_huge(c.col_indices, nnz);
  reserve_huge(c.values, nnz);
  c.col_indices.resize(nnz);
  c.values.resize(nnz);
  // numeric pass: a marker, an accumulator and a bit per column of B and slice
  const job_memory::hold accumulators(memory,
                                      static_cast<std::size_t>(parts) * slice_accumulator_bytes(b.cols, sizeof(T)));
  detail::parallel_slices(slices, slices, [&](int, std::int64_t p, std::int64_t) {
    std::vector<T> accumulator(static_cast<std::size_t>(b.cols));
    std::vector<std::int64_t> marker(static_cast<std::size_t>(b.cols), -1);
    std::vector<std::uint64_t> bits(static_cast<std::size_t>((b.cols + 63) / 64), 0);
    std::int64_t work = 0;
    for (std::int64_t r = bounds[p]; r < bounds[p + 1]; ++r) {
      if (work >= poll_work) {
        cancel.throw_if_cancelled();
        work = 0;
      }
      const std::int64_t open = 2 * r;
      const std::int64_t done = open + 1;
      mark_mask_row<Mode>(mask, r, marker);
      index_t* cols = c.col_indices.data() + c.row_offsets[r];
      std::int64_t count = 0;
      ++work;
      for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
        const index_t j = a.col_indices[k];
        const T a_value = a.values[k];
        work += b.row_offsets[j + 1] - b.row_offsets[j];
        for (offset_t l = b.row_offsets[j]; l < b.row_offsets[j + 1]; ++l) {
          const index_t col = b.col_indices[l];
          std::int64_t& mark = marker[col];
          if (mark == done) {
            accumulator[col] = ring.add(accumulator[col], ring.mul(a_value, b.values[l]));
          } else if (opens<Mode>(mark, open)) {
            mark = done;
            accumulator[col] = ring.mul(a_value, b.values[l]);
            cols[count++] = col;
          }
        }
      }
      order_columns(cols, count, bits.data());
      T* values = c.values.data() + c.row_offsets[r];
      for (std::int64_t i = 0; i < count; ++i) values[i] = accumulator[cols[i]];
    }
  });
  return c;
}

}  // namespace

template <typename T>
csr_matrix<T> gustavson(const csr_matrix<T>& a, const csr_matrix<T>& b, const semiring& ring, const mask_rows& mask,
                        int threads, job_memory& memory, const cancel_token& cancel) {
  require_conformable(info_of(a), info_of(b));
  check_semiring(ring);
  return ops::with_semiring(ring, [&](auto ring_ops) {
    if (mask.offsets == nullptr) return gustavson_rows<T, decltype(ring_ops), mask_mode::none>(a, b, ring_ops, mask, threads, memory, cancel);
    if (mask.complement) return gustavson_rows<T, decltype(ring_ops), mask_mode::forbid>(a, b, ring_ops, mask, threads, memory, cancel);
    return gustavson_rows<T, decltype(ring_ops), mask_mode::allow>(a, b, ring_ops, mask, threads, memory, cancel);
  });
}

template csr_matrix<float> gustavson(const csr_matrix<float>&, const csr_matrix<float>&, const semiring&,
                                     const mask_rows&, int, job_memory&, const cancel_token&);
template csr_matrix<double> gustavson(const csr_matrix<double>&, const csr_matrix<double>&, const semiring&,
                                      const mask_rows&, int, job_memory&, const cancel_token&);
std::size_t gustavson_numeric_workspace_bytes(std::int64_t a_rows, std::int64_t b_cols, std::size_t value_bytes,
                                              int threads) {
  const auto parts = static_cast<std::size_t>(gustavson_parts(a_rows, threads));
  return static_cast<std::size_t>(a_rows + 1) * sizeof(std::int64_t) + (parts + 1) * sizeof(std::int64_t) +
         parts * static_cast<std::size_t>(b_cols) * value_bytes;
}

template <typename T>
void gustavson_numeric(const csr_matrix<T>& a, const csr_matrix<T>& b, csr_matrix<T>& c, int threads,
                       job_memory& memory) {
  require_conformable(info_of(a), info_of(b));
  const int parts = gustavson_parts(a.rows, threads);
  const job_memory::hold slicing(memory,
                                 (static_cast<std::size_t>(a.rows) + 2 + static_cast<std::size_t>(parts)) *
                                     sizeof(std::int64_t));
  const auto bounds = balanced_slices(a, b, parts);
  const int slices = static_cast<int>(bounds.size()) - 1;
  const job_memory::hold accumulators(memory,
                                      static_cast<std::size_t>(parts) * static_cast<std::size_t>(b.cols) * sizeof(T));
  c.values.resize(c.col_indices.size());
  detail::parallel_slices(slices, slices, [&](int, std::int64_t p, std::int64_t) {
    // Zero at C's columns of the row before it is summed, read and zeroed after.
    std::vector<T> accumulator(static_cast<std::size_t>(b.cols), T{0});
    for (std::int64_t r = bounds[p]; r < bounds[p + 1]; ++r) {
      for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
        const index_t j = a.col_indices[k];
        const T a_value = a.values[k];
        for (offset_t l = b.row_offsets[j]; l < b.row_offsets[j + 1]; ++l) {
          accumulator[b.col_indices[l]] += a_value * b.values[l];
        }
      }
      for (offset_t k = c.row_offsets[r]; k < c.row_offsets[r + 1]; ++k) {
        T& sum = accumulator[c.col_indices[k]];
        c.values[k] = sum;
        sum = T{0};
      }
    }
  });
}

template void gustavson_numeric(const csr_matrix<float>&, const csr_matrix<float>&, csr_matrix<float>&, int,
                                job_memory&);
template void gustavson_numeric(const csr_matrix<double>&, const csr_matrix<double>&, csr_matrix<double>&, int,
                                job_memory&);

}  // namespace cpu

template <typename T>
csr_matrix<T> cpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, int threads) {
  return cpu_multiply(a, b, semiring{}, threads);
}

template <typename T>
csr_matrix<T> cpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, int threads, const cancel_token& cancel) {
  cpu::job_memory unbounded(std::numeric_limits<std::size_t>::max(), "gustavson");
  return cpu::gustavson(a, b, semiring{}, cpu::mask_rows{}, threads, unbounded, cancel);
}

template <typename T>
csr_matrix<T> cpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, const semiring& ring, int threads) {
  cpu::job_memory unbounded(std::numeric_limits<std::size_t>::max(), "gustavson");
  return cpu::gustavson(a, b, ring, cpu::mask_rows{}, threads, unbounded, cancel_token());
}

template <typename T, typename M>
csr_matrix<T> cpu_masked_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, const csr_matrix<M>& mask,
                                  const mask_options& options, const semiring& ring, int threads) {
  require_mask_shape(info_of(mask), a.rows, b.cols);
  cpu::job_memory unbounded(std::numeric_limits<std::size_t>::max(), "gustavson");
  return cpu::gustavson(a, b, ring, cpu::mask_rows::of(mask, options), threads, unbounded, cancel_token());
}

template <typename T>
double scaled_max_error(const csr_matrix<T>& c, const csr_matrix<T>& ref, const csr_matrix<T>& a,
                        const csr_matrix<T>& b) {
  if (c.rows != ref.rows || c.cols != ref.cols || c.row_offsets != ref.row_offsets ||
      c.col_indices != ref.col_indices) {
    return std::numeric_limits<double>::infinity();
  }
  auto absolute = [](csr_matrix<T> m) {
    for (auto& v : m.values) v = std::abs(v);
    return m;
  };
  const csr_matrix<T> scale = cpu_multiply(absolute(a), absolute(b));
  double worst = 0;
  for (std::size_t k = 0; k < c.values.size(); ++k) {
    const double diff = std::abs(static_cast<double>(c.values[k]) - static_cast<double>(ref.values[k]));
    if (std::isnan(diff)) return std::numeric_limits<double>::infinity();
    if (diff == 0) continue;
    // Entries whose |A||B| is zero can only be exactly zero in both results.
    const double s = static_cast<double>(scale.values[k]);
    worst = std::max(worst, s > 0 ? diff / s : std::numeric_limits<double>::infinity());
  }
  return worst;
}

template csr_matrix<float> cpu_multiply(const csr_matrix<float>&, const csr_matrix<float>&, int);
template csr_matrix<double> cpu_multiply(const csr_matrix<double>&, const csr_matrix<double>&, int);
template csr_matrix<float> cpu_multiply(const csr_matrix<float>&, const csr_matrix<float>&, int, const cancel_token&);
template csr_matrix<double> cpu_multiply(const csr_matrix<double>&, const csr_matrix<double>&, int,
                                         const cancel_token&);
template csr_matrix<float> cpu_multiply(const csr_matrix<float>&, const csr_matrix<float>&, const semiring&, int);
template csr_matrix<double> cpu_multiply(const csr_matrix<double>&, const csr_matrix<double>&, const semiring&, int);
template csr_matrix<float> cpu_masked_multiply(const csr_matrix<float>&, const csr_matrix<float>&,
                                               const csr_matrix<float>&, const mask_options&, const semiring&, int);
template csr_matrix<float> cpu_masked_multiply(const csr_matrix<float>&, const csr_matrix<float>&,
                                               const csr_matrix<double>&, const mask_options&, const semiring&, int);
template csr_matrix<double> cpu_masked_multiply(const csr_matrix<double>&, const csr_matrix<double>&,
                                                const csr_matrix<float>&, const mask_options&, const semiring&, int);
template csr_matrix<double> cpu_masked_multiply(const csr_matrix<double>&, const csr_matrix<double>&,
                                                const csr_matrix<double>&, const mask_options&, const semiring&, int);
template double scaled_max_error(const csr_matrix<float>&, const csr_matrix<float>&, const csr_matrix<float>&,
                                 const csr_matrix<float>&);
template double scaled_max_error(const csr_matrix<double>&, const csr_matrix<double>&, const csr_matrix<double>&,
                                 const csr_matrix<double>&);

}  // namespace spgemm
