// The GPU side of algebraic multigrid (amg/operations.hpp): the passes of a
// setup and the vector kernels of a cycle on device arrays, each the parallel
// form of its CPU pass (amg/cpu/passes.hpp) with the same rules, so both
// give the same aggregates and patterns. Kernels live in *_kernels.cuh, the
// dispatch in vectors.cu, setup.cu, dense.cu and scan.cu. Every allocation comes from
// the memory resource a pass is given, on its stream; a pass returns with its
// work queued on the stream, except where it reads a count back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "cuda/device_csr.hpp"
#include "cuda/memory_resource.hpp"

namespace spgemm::amg::gpu {

// The lanes of the kernels that take a group per row of a matrix (SpMV, the
// inverse diagonal, Lanczos): the power of two at or above a quarter of its
// mean row, from 2 to a warp. A lane takes about four entries, so that a warp
// has several rows' loads in flight: on the H100 the spectral radius took
// 4.7 ms instead of 5.2 on poisson3d27:101 (8 lanes, not 32), a V-cycle
// solve 21 instead of 28.
inline int group_width(std::int64_t mean_row) {
  int g = 2;
  while (g < 32 && g < mean_row / 4) g *= 2;
  return g;
}

// Vectors (vectors.cu). A term with a zero coefficient is not read.
// out_i = hashed_value(i) (amg/independent_set_rule.hpp).
void hashed(std::int64_t n, double* out, cudaStream_t stream);
void axpby(std::int64_t n, double a, const double* x, double b, double* y, cudaStream_t stream);
// y = a (d .* x) + b y.
void scaled_axpby(std::int64_t n, double a, const double* d, const double* x, double b, double* y,
                  cudaStream_t stream);
// x . y, read back.
double dot(std::int64_t n, const double* x, const double* y, cuda::memory_resource& memory, cudaStream_t stream);
// y = alpha A x + beta y: a group of lanes per row, as many as A's mean row length (up to a warp).
void spmv(const cuda::csr_view<double>& a, const double* x, double alpha, double beta, double* y,
          cudaStream_t stream);
// The Lanczos steps of amg::operations::lanczos on S A S (S = diag(s)) from
// the normalized v and u = S v, with every scalar on the device (lanczos.cu):
// v, u, w and prev (n values each) are overwritten; alpha and beta read back
// once.
void lanczos(const cuda::csr_view<double>& a, const double* s, double* v, double* u, double* w, double* prev,
             int steps, std::vector<double>& alpha, std::vector<double>& beta, cuda::memory_resource& memory,
             cudaStream_t stream);
// One pass over A: 1 / a_ii into `inverse` and |a_ii|^-1/2 into `inverse_sqrt`, each where not null;
// -1 where every row has a nonzero diagonal, else the first row without (read back).
std::int64_t inverse_diagonals(const cuda::csr_view<double>& a, double* inverse, double* inverse_sqrt,
                               cuda::memory_resource& memory, cudaStream_t stream);

// Setup passes (setup.cu): as their CPU passes.
cuda::device_csr<float> strength(const cuda::csr_view<double>& a, int block_size, double theta,
                                 cuda::memory_resource& memory, cudaStream_t stream);

struct aggregates {
  cuda::device_csr<double> matrix;  // nodes x count, values 1
  std::int64_t count = 0;
  int rounds = 0;
};
aggregates aggregate(const cuda::structure_view& graph, cuda::memory_resource& memory, cudaStream_t stream);

struct tentative_prolongator {
  cuda::device_csr<double> t;
  cuda::device_buffer<double> coarse;  // (count * columns) x columns, row-major
};
tentative_prolongator tentative(const cuda::structure_view& aggregates, std::int64_t count, const double* b,
                                int rows_per_node, int columns, cuda::memory_resource& memory, cudaStream_t stream);

cuda::device_csr<double> smooth_prolongator(const cuda::csr_view<double>& t, const cuda::csr_view<double>& at,
                                            const double* dinv, double omega, cuda::memory_resource& memory,
                                            cudaStream_t stream);

// The coarsest level (dense.cu): A^-1 by blocked Gauss-Jordan without pivoting
// (n x n, row-major, into `inverse`); false on a zero pivot. x = M y for a
// dense n x n M.
bool invert(const cuda::csr_view<double>& a, double* inverse, cuda::memory_resource& memory, cudaStream_t stream);
void dense_multiply(std::int64_t n, const double* m, const double* x, double* y, cudaStream_t stream);

// out[0 .. n] = the exclusive sum of counts in out[0 .. n) (in place, out[n]
// overwritten), and that sum, read back (scan.cu).
std::int64_t exclusive_sum(offset_t* out, std::int64_t n, cuda::memory_resource& memory, cudaStream_t stream);

}  // namespace spgemm::amg::gpu
