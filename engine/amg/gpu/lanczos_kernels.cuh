// The Lanczos steps of the spectral radius (lanczos.cu) with every scalar on
// the device: a step is three launches (S A S v with the partial sums of
// w . v, alpha summed by the block that finishes last; the orthogonalization
// with those of w . w, beta likewise; the next v and S v) and no read back,
// where the portable loop (amg::operations::lanczos) reads two dot products
// back per step. Each kernel starts while the one before it finishes
// (cuda/dependent_launch.cuh) and waits for it, then reads `stopped` (set
// at an invariant subspace) and does nothing once it is. Products and sums
// rounded one by one, as the CPU's loops; the partial sums over a fixed
// grid, summed in one order by whichever block is last, so a fixed order.
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cstdint>

#include "cuda/dependent_launch.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::amg::gpu::kernels {

inline constexpr int lanczos_threads = 256;
inline constexpr int lanczos_parts = 4096;  // partial sums of a dot product (a block's each), reduced by one block
// Blocks of the vector kernels at most: more leave each block too little
// work to weigh its reduction and lengthen the last block's sum, where the
// product's gathers want more blocks (lanczos_parts) to keep rows in flight
// (docs/amg.md).
inline constexpr int lanczos_vector_blocks = 1024;

// The recurrence's state: alpha_k and beta_k of every step, the steps taken
// when it stopped (0 while it runs), the blocks of the running kernel that
// have written their partial sum (back to 0 when the kernel ends), and the
// partial sums of the step's dot product (lanczos_parts of them).
struct lanczos_state {
  double* alpha;
  double* beta;
  int* stopped;
  unsigned* arrived;
  double* partial;
};

// Called by every thread after thread 0 wrote the block's partial sum: true
// in the one block that arrives last, which then sees every block's sum.
__device__ __forceinline__ bool last_to_arrive(unsigned* arrived) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence();  // the partial sum, before the arrival that publishes it
    last = atomicAdd(arrived, 1u) == gridDim.x - 1;
    if (last) *arrived = 0;  // for the next kernel, in stream order
  }
  __syncthreads();
  return last;
}

// The last block: the sum of the grid's partial sums, read past L1 (other
// SMs wrote them during this kernel), in the order of the partials.
__device__ __forceinline__ double sum_of_parts(const double* partial) {
  using reduce = cub::BlockReduce<double, lanczos_threads>;
  __shared__ typename reduce::TempStorage temp;
  double sum = 0;
#pragma unroll 8
  for (int i = static_cast<int>(threadIdx.x); i < static_cast<int>(gridDim.x); i += lanczos_threads)
    sum += __ldcg(partial + i);
  return reduce(temp).Sum(sum);
}

// w = S A u with u = S v (a group of G lanes per row, as spmv_kernel; one
// vector gathered, not two), the block's partial sum of w . v, and alpha_k.
template <int G>
__global__ void __launch_bounds__(lanczos_threads)
    lanczos_apply_kernel(std::int64_t rows, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                         const double* __restrict__ val, const double* __restrict__ s, const double* __restrict__ u,
                         const double* __restrict__ v, double* __restrict__ w, int k, lanczos_state st) {
  using reduce = cub::BlockReduce<double, lanczos_threads>;
  __shared__ typename reduce::TempStorage temp;
  cuda::wait_for_previous_grid();
  cuda::release_next_grid();
  if (*st.stopped) return;
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / G);
  const int lane = static_cast<int>(threadIdx.x % G);
  const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << ((threadIdx.x & 31u) & ~static_cast<unsigned>(G - 1));
  double dot = 0;
  for (std::int64_t row = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / G; row < rows;
       row += groups) {
    double sum = 0;
    for (offset_t k = off[row] + lane; k < off[row + 1]; k += G) {
      sum = __dadd_rn(sum, __dmul_rn(val[k], u[col[k]]));
    }
#pragma unroll
    for (int width = G / 2; width > 0; width /= 2) sum += __shfl_down_sync(mask, sum, width, G);
    if (lane == 0) {
      const double wi = __dmul_rn(s[row], sum);
      w[row] = wi;
      dot = __dadd_rn(dot, __dmul_rn(wi, v[row]));
    }
  }
  dot = reduce(temp).Sum(dot);
  if (threadIdx.x == 0) st.partial[blockIdx.x] = dot;
  if (!last_to_arrive(st.arrived)) return;
  const double alpha = sum_of_parts(st.partial);
  if (threadIdx.x == 0) st.alpha[k] = alpha;
}

// w = w - alpha_k v - beta_{k-1} prev (no prev at k = 0), the block's
// partial sum of w . w, and beta_k = |w|: the recurrence stops after this
// step at an invariant subspace.
__global__ void __launch_bounds__(lanczos_threads)
    lanczos_orthogonalize_kernel(std::int64_t n, int k, const double* __restrict__ v, const double* __restrict__ prev,
                                 double* __restrict__ w, lanczos_state st) {
  using reduce = cub::BlockReduce<double, lanczos_threads>;
  __shared__ typename reduce::TempStorage temp;
  cuda::wait_for_previous_grid();
  cuda::release_next_grid();
  if (*st.stopped) return;
  const double a = st.alpha[k];
  const double b = k > 0 ? st.beta[k - 1] : 0.0;
  double dot = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    double wi = __dadd_rn(__dmul_rn(-a, v[i]), w[i]);
    if (k > 0) wi = __dadd_rn(__dmul_rn(-b, prev[i]), wi);
    w[i] = wi;
    dot = __dadd_rn(dot, __dmul_rn(wi, wi));
  }
  dot = reduce(temp).Sum(dot);
  if (threadIdx.x == 0) st.partial[blockIdx.x] = dot;
  if (!last_to_arrive(st.arrived)) return;
  const double sum = sum_of_parts(st.partial);
  if (threadIdx.x == 0) {
    const double beta = sqrt(sum > 0 ? sum : 0.0);
    st.beta[k] = beta;
    if (beta <= 1e-12 * fabs(a)) *st.stopped = k + 1;
  }
}

// The next v: w / beta_k, into `out`, and u = S v.
__global__ void __launch_bounds__(lanczos_threads)
    lanczos_next_kernel(std::int64_t n, int k, const double* __restrict__ s, const double* __restrict__ w,
                        double* __restrict__ out, double* __restrict__ u, lanczos_state st) {
  cuda::wait_for_previous_grid();
  cuda::release_next_grid();
  if (*st.stopped) return;
  const double scale = 1.0 / st.beta[k];
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double vi = __dmul_rn(scale, w[i]);
    out[i] = vi;
    u[i] = __dmul_rn(s[i], vi);
  }
}

}  // namespace spgemm::amg::gpu::kernels
