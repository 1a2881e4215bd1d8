// bhSPARSE's heap method for the shortest rows (Liu & Vinter 2015, section
// 4.1, Figure 2): the candidate entries of a row (column, value) in an
// implicit max-heap by column, then a heapsort whose delete-max fuses the root
// into the first entry of the result when their columns are equal and
// inserts it before that entry otherwise. The result grows from the end of
// the array as the heap shrinks from it: sorted ascending, columns unique, in
// slots [first, n). One thread per row; host and device, so that the CPU
// tests run it (tests/engine/bhsparse_bins_test.cpp). `keys(i)` and
// `vals(i)` return references to slot i (in a kernel: the thread's slots of
// shared memory).
#pragma once

#if defined(__CUDACC__)
#define SPGEMM_HEAP_FN __host__ __device__ inline
#else
#define SPGEMM_HEAP_FN inline
#endif

namespace spgemm::bhsparse {

template <typename Keys, typename Vals>
SPGEMM_HEAP_FN void heap_sift_down(Keys& keys, Vals& vals, int at, int size) {
  for (;;) {
    const int left = 2 * at + 1;
    if (left >= size) return;
    const int right = left + 1;
    const int child = right < size && keys(left) < keys(right) ? right : left;
    if (!(keys(at) < keys(child))) return;
    const auto k = keys(at);
    keys(at) = keys(child);
    keys(child) = k;
    const auto v = vals(at);
    vals(at) = vals(child);
    vals(child) = v;
    at = child;
  }
}

// Sorts slots [0, n) by column and fuses equal columns (values added);
// returns `first`: the result lies in [first, n).
template <typename Keys, typename Vals>
SPGEMM_HEAP_FN int heap_merge_row(Keys& keys, Vals& vals, int n) {
  for (int s = n / 2 - 1; s >= 0; --s) heap_sift_down(keys, vals, s, n);
  int size = n;
  int first = n;
  while (size > 0) {
    const auto top = keys(0);
    const auto value = vals(0);
    --size;
    if (size > 0) {  // the last leaf to the root; slot `size` is free now
      keys(0) = keys(size);
      vals(0) = vals(size);
      heap_sift_down(keys, vals, 0, size);
    }
    if (first < n && keys(first) == top) {
      vals(first) += value;
    } else {  // first > size: the slot before the result is free
      --first;
      keys(first) = top;
      vals(first) = value;
    }
  }
  return first;
}

}  // namespace spgemm::bhsparse
