// Segmented merge (Ji, Lu, Hou, Wang, Liu & Vinter, "Segmented merge: a new
// primitive for parallel sparse matrix computations", NPC 2020, section
// 3.4): n key-value items hold q sorted sub-segments, grouped into p
// segments; the merge makes every segment one sorted run. Sub-segment i is
// items [sub[i], sub[i + 1]) (sub[q] = n), segment s its sub-segments [seg[s],
// seg[s + 1]) (seg[p] = q), seg_of[i] the segment of sub-segment i. Pass t
// merges, in every segment at once, the runs of 2^t sub-segments pairwise
// (run 2j with run 2j + 1; a last run without a partner is copied) into the
// other buffer: after ceil(log2(most sub-segments of a segment)) passes each
// segment is one run. Every thread merges a fixed number of items
// (items_per_thread) by merge path (merge_path.hpp), whatever the segments'
// and sub-segments' lengths: the load balance of the primitive. Stable: equal
// keys keep the order of their sub-segments. Kernels only (device code);
// segmented_merge() runs the passes on a stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/merge_path.hpp"

namespace spgemm::cuda {

inline constexpr int segmented_merge_threads = 256;
inline constexpr int segmented_merge_items = 8;  // per thread and pass

template <typename K, typename V>
__global__ void __launch_bounds__(segmented_merge_threads)
    segmented_merge_pass_kernel(const K* __restrict__ keys_in, const V* __restrict__ vals_in, K* __restrict__ keys_out,
                                V* __restrict__ vals_out, std::int64_t n, const std::int64_t* __restrict__ sub,
                                std::int64_t q, const int* __restrict__ seg_of, const std::int64_t* __restrict__ seg,
                                int level) {
  const std::int64_t x0 =
      (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * segmented_merge_items;
  if (x0 >= n) return;
  const std::int64_t x1 = x0 + segmented_merge_items < n ? x0 + segmented_merge_items : n;
  segmented_merge_range(keys_in, vals_in, keys_out, vals_out, sub, q, seg_of, seg, level, x0, x1);
}

// Runs `passes` passes over (keys[0], vals[0]) and (keys[1], vals[1]) in
// turn; returns the index (0 or 1) of the buffers that hold the result.
template <typename K, typename V>
int segmented_merge(K* const (&keys)[2], V* const (&vals)[2], std::int64_t n, const std::int64_t* sub, std::int64_t q,
                    const int* seg_of, const std::int64_t* seg, int passes, cudaStream_t stream) {
  int in = 0;
  if (n == 0) return in;
  const std::int64_t threads = (n + segmented_merge_items - 1) / segmented_merge_items;
  const auto blocks = static_cast<unsigned>((threads + segmented_merge_threads - 1) / segmented_merge_threads);
  for (int level = 0; level < passes; ++level) {
    segmented_merge_pass_kernel<K, V><<<blocks, segmented_merge_threads, 0, stream>>>(
        keys[in], vals[in], keys[1 - in], vals[1 - in], n, sub, q, seg_of, seg, level);
    SPGEMM_CUDA_CHECK_LAUNCH();
    in = 1 - in;
  }
  return in;
}

}  // namespace spgemm::cuda
