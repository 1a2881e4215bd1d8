// Merge path (Green, McColl & Bader 2012; Odeh et al. 2012): where the
// merge of two sorted sequences crosses a diagonal, so that threads merge
// disjoint, equal shares of the output with no communication; and one
// thread's share of a pass of the segmented merge (segmented_merge.cuh).
// Host and device functions, no CUDA headers: unit-tested on the CPU
// (tests/engine/bhsparse_bins_test.cpp). Ties go to the first sequence (a
// stable merge: equal keys of `a` come before those of `b`).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SPGEMM_MERGE_PATH_FN __host__ __device__ inline
#else
#define SPGEMM_MERGE_PATH_FN inline
#endif

namespace spgemm::cuda {

// How many of the first `diag` outputs of merge(a, b) come from a (the rest,
// diag minus that, from b); 0 <= diag <= na + nb. `a` and `b` are indexable
// (arrays in any memory).
template <typename A, typename B>
SPGEMM_MERGE_PATH_FN std::int64_t merge_path_split(const A& a, std::int64_t na, const B& b, std::int64_t nb,
                                                        std::int64_t diag) {
  std::int64_t lo = diag > nb ? diag - nb : 0;
  std::int64_t hi = diag < na ? diag : na;
  while (lo < hi) {
    const std::int64_t mid = lo + ((hi - lo) >> 1);
    // a[mid] is among the first diag outputs if it does not exceed the b
    // that would otherwise fill output diag - 1 - mid.
    if (!(b[diag - 1 - mid] < a[mid])) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Outputs [diag, diag + count) of merge(a, b), starting with a at ai and b at
// bi (merge_path_split at diag): out(k, from_a, index) is called for each in
// order, k counting from 0.
template <typename A, typename B, typename Out>
SPGEMM_MERGE_PATH_FN void serial_merge(const A& a, std::int64_t na, const B& b, std::int64_t nb, std::int64_t ai,
                                            std::int64_t bi, std::int64_t count, Out&& out) {
  for (std::int64_t k = 0; k < count; ++k) {
    const bool from_a = bi >= nb || (ai < na && !(b[bi] < a[ai]));
    if (from_a) {
      out(k, true, ai++);
    } else {
      out(k, false, bi++);
    }
  }
}

// The last i in [0, q] with sub[i] <= x (sub non-decreasing, sub[0] <= x).
template <typename Sub>
SPGEMM_MERGE_PATH_FN std::int64_t last_start_at_most(const Sub& sub, std::int64_t q, std::int64_t x) {
  std::int64_t lo = 0;
  std::int64_t hi = q;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi + 1) >> 1;
    if (sub[mid] <= x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Items [x0, x1) of pass `level` of the segmented merge (segmented_merge.cuh
// describes sub, seg_of and seg): each item of the output taken from the
// pair of runs of 2^level sub-segments that covers it, by merge path.
template <typename K, typename V, typename Sub, typename SegOf, typename Seg>
SPGEMM_MERGE_PATH_FN void segmented_merge_range(const K* keys_in, const V* vals_in, K* keys_out, V* vals_out,
                                                const Sub& sub, std::int64_t q, const SegOf& seg_of, const Seg& seg,
                                                int level, std::int64_t x0, std::int64_t x1) {
  std::int64_t d = x0;
  while (d < x1) {
    const std::int64_t i = last_start_at_most(sub, q, d);  // the sub-segment holding item d
    const auto s = seg_of[i];
    const std::int64_t first = seg[s];
    const std::int64_t last = seg[s + 1];
    const std::int64_t j0 = first + (((i - first) >> (level + 1)) << (level + 1));
    const std::int64_t jm = j0 + (std::int64_t{1} << level) < last ? j0 + (std::int64_t{1} << level) : last;
    const std::int64_t je = j0 + (std::int64_t{2} << level) < last ? j0 + (std::int64_t{2} << level) : last;
    const std::int64_t a0 = sub[j0];
    const std::int64_t am = sub[jm];
    const std::int64_t ae = sub[je];
    const std::int64_t count = (x1 < ae ? x1 : ae) - d;
    const K* a = keys_in + a0;
    const K* b = keys_in + am;
    const std::int64_t ai = merge_path_split(a, am - a0, b, ae - am, d - a0);
    serial_merge(a, am - a0, b, ae - am, ai, d - a0 - ai, count, [&](std::int64_t k, bool from_a, std::int64_t at) {
      keys_out[d + k] = from_a ? a[at] : b[at];
      vals_out[d + k] = from_a ? vals_in[a0 + at] : vals_in[am + at];
    });
    d += count;
  }
}

}  // namespace spgemm::cuda
