// Warp and block primitives the kernels of several methods share: sums,
// maxima and scans by shuffles, and counting lanes into bins. Device code
// only; every lane of the warp (block_inclusive_scan: of the block) calls them.
#pragma once

namespace spgemm::cuda {

constexpr unsigned full_mask = 0xffffffffu;

template <typename V>
__device__ __forceinline__ V warp_sum(V v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(full_mask, v, d);
  return v;
}

template <typename V>
__device__ __forceinline__ V warp_max(V v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    const V u = __shfl_xor_sync(full_mask, v, d);
    v = u > v ? u : v;
  }
  return v;
}

__device__ __forceinline__ long long warp_inclusive_scan(long long v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const long long u = __shfl_up_sync(full_mask, v, d);
    if (lane >= d) v += u;
  }
  return v;
}

// Inclusive scan over the block; `total` receives the block's sum.
__device__ __forceinline__ long long block_inclusive_scan(long long v, long long& total) {
  __shared__ long long warp_totals[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  v = warp_inclusive_scan(v);
  if (lane == 31) warp_totals[warp] = v;
  __syncthreads();
  long long offset = 0;
  long long sum = 0;
  for (int w = 0; w < warps; ++w) {
    const long long t = warp_totals[w];
    if (w < warp) offset += t;
    sum += t;
  }
  total = sum;
  __syncthreads();
  return v + offset;
}

// Adds one to counts[bin] (shared memory) for every lane of the warp with
// `counts_row` true and returns the lane's rank among them (what
// counts[bin] held before it): the lanes of one bin add together, one atomic
// per bin and warp, where an atomic per lane would serialize on the bin most
// rows share.
__device__ __forceinline__ unsigned count_in_bin(unsigned* counts, int bin, bool counts_row) {
  const unsigned peers = __match_any_sync(full_mask, counts_row ? bin : -1);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int leader = __ffs(peers) - 1;
  unsigned first = 0;
  if (counts_row && lane == leader) first = atomicAdd(&counts[bin], __popc(peers));
  return __shfl_sync(full_mask, first, leader) + __popc(peers & ((1u << lane) - 1u));
}

}  // namespace spgemm::cuda
