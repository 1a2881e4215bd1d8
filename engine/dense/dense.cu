// Dense SpGEMM host dispatch (see dense.hpp for the contract,
// dense_kernels.cuh for the kernels and dense_tuning.hpp for the plan).
//
// Phases: (1) the plan (tile, warps, cluster) from A's shape, B's columns and
// the device's SMs and shared memory; the cluster is halved until the device
// can hold one (cudaOccupancyMaxActiveClusters); C's offsets allocated;
// (2) the symbolic kernel writes every row's nnz into C's offsets; (3)
// exclusive scan in place (CUB), nnz(C) read back, C's entries allocated
// exactly; (4) the numeric kernel writes C.
// Workspace: the scan's storage; nothing else beyond C.
// Complexity: two passes over the products (dense_kernels.cuh), each one
// kernel launch as rows x cluster blocks.
#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "cuda/read_back.hpp"
#include "cuda/scan.cuh"
#include "dense/dense.hpp"
#include "dense/dense_kernels.cuh"
#include "dense/dense_tuning.hpp"
#include "planner/statistics.hpp"

namespace spgemm::dense {
namespace {

using cuda::device_csr;
using cuda::memory_resource;

template <typename T, bool Numeric>
cudaLaunchConfig_t launch_config(const plan& pl, std::int64_t rows, cudaStream_t stream, cudaLaunchAttribute& cluster) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(rows * pl.cluster));
  config.blockDim = dim3(static_cast<unsigned>(pl.block_threads()));
  config.dynamicSmemBytes = shared_bytes(pl.tile, pl.warps, Numeric ? sizeof(T) : 0);
  config.stream = stream;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(pl.cluster);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

// The plan for this job on the current device: the cluster halved until one
// fits an SM group (the numeric kernel takes the most shared memory).
template <typename T>
plan plan_for(const cuda::structure_view& a, const cuda::structure_view& b) {
  const cuda::device_facts f = cuda::current_device_facts();
  plan pl = make_plan(a.rows, a.nnz, b.cols, sizeof(T), f.max_shared, f.sm_count);
  const auto kernel = kernels::dense_kernel<T, true>;
  cuda::allow_max_dynamic_shared(kernel);
  while (pl.cluster > 1) {
    cudaLaunchAttribute cluster{};
    const cudaLaunchConfig_t config = launch_config<T, true>(pl, std::max<std::int64_t>(a.rows, 1), nullptr, cluster);
    int clusters = 0;
    SPGEMM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    if (clusters > 0) break;
    pl.cluster /= 2;
  }
  return pl;
}

template <typename T, bool Numeric>
void launch(const plan& pl, const kernels::params<T>& p, cudaStream_t stream) {
  const auto kernel = kernels::dense_kernel<T, Numeric>;
  cuda::allow_max_dynamic_shared(kernel);
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t config = launch_config<T, Numeric>(pl, p.rows, stream, cluster);
  SPGEMM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, p));
}

}  // namespace

memory_estimate estimate(const method::job& job) {
  const planner::job_stats s =
      planner::compute_stats(job.a, job.b, job.value_bytes, job.tuning, job.memory, job.stream);
  memory_estimate e;
  e.exact = false;
  e.products = s.products;
  e.nnz_bound = s.nnz_c_bound;
  e.output_bytes = cuda::csr_bytes(s.rows, s.nnz_c_bound, job.value_bytes);
  e.workspace_bytes = cuda::exclusive_scan_bytes<offset_t>(job.a.rows + 1);
  e.method = describe(job.value_bytes == sizeof(double) ? plan_for<double>(job.a, job.b)
                                                        : plan_for<float>(job.a, job.b));
  return e;
}

template <typename T>
device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  memory_resource& memory = job.memory;
  const cudaStream_t stream = job.stream;
  const std::int64_t m = a.rows;
  if (m == 0 || a.nnz == 0 || b.nnz == 0) {
    device_csr<T> c = cuda::with_zero_offsets<T>(m, b.cols, memory, stream);
    cuda::allocate_entries(c, 0, memory, stream);
    return c;
  }
  const plan pl = plan_for<T>(a.structure(), b.structure());
  device_csr<T> c = cuda::with_offsets<T>(m, b.cols, memory, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(c.row_offsets.data() + m, 0, sizeof(offset_t), stream));
  kernels::params<T> p;
  p.rows = m;
  p.a_off = a.row_offsets;
  p.a_col = a.col_indices;
  p.a_val = a.values;
  p.b_off = b.row_offsets;
  p.b_col = b.col_indices;
  p.b_val = b.values;
  p.tile = pl.tile;
  p.tiles = pl.tiles;
  p.warps = pl.warps;
  p.cluster = pl.cluster;
  p.c_off = c.row_offsets.data();
  launch<T, false>(pl, p, stream);
  cuda::exclusive_scan_in_place(c.row_offsets.data(), m + 1, memory, stream);
  c.nnz = cuda::read_back(c.row_offsets.data() + m, stream);
  job.cancel.throw_if_cancelled();
  cuda::allocate_entries(c, c.nnz, memory, stream);
  if (c.nnz > 0) {
    p.c_col = c.col_indices.data();
    p.c_val = c.values.data();
    launch<T, true>(pl, p, stream);
  }
  return c;
}

template device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template device_csr<double> run(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&);

}  // namespace spgemm::dense
