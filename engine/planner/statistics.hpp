// What the planner reads of matrices and products, measured on the device:
// the shape of a matrix's rows, the dense block sizes it is made of, and the
// statistics pass over a product (its products, the bound of nnz(C), every
// row's symbolic bin for the hash method). Small kernels, one read-back a
// measurement; the GPU backend keeps a stored matrix's row shape and block
// sizes, the hash method runs the statistics pass inside its product.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/device_csr.hpp"
#include "cuda/memory_resource.hpp"
#include "planner/block_structure.hpp"
#include "planner/job_rules.hpp"
#include "planner/row_bins.hpp"
#include "spgemm/tuning.hpp"

namespace spgemm::planner {

// Lanes that take one row of a matrix in the passes over its entries (the
// statistics pass, RMerge's bounds): the power of two (1 .. 32) at or above
// a quarter of its mean length, so that small matrices of long rows keep the
// GPU busy (a thread per row left it nearly idle) while each lane loads a
// few entries at once (a lane per entry left the passes bound by the latency
// of a row's loads, one row after another); rows longer than stats_long_row
// are summed by a whole warp (hub rows of thousands of entries would hold a
// few lanes for long).
inline constexpr int stats_entries_per_lane = 4;

inline int stats_lanes(std::int64_t rows, std::int64_t nnz) {
  int lanes = 1;
  while (lanes < 32 && static_cast<std::int64_t>(lanes) * stats_entries_per_lane * rows < nnz) lanes *= 2;
  return lanes;
}
inline constexpr std::int64_t stats_long_row = 64;

// The device scratch one measurement below holds while it runs (seven words).
inline constexpr std::size_t statistics_scratch_bytes = 7 * sizeof(unsigned long long);

// Rows, nnz, the longest row of `m`, on which sides of the diagonal its
// entries lie and its repeat candidates (diagonal_distance left 0).
row_stats compute_row_stats(const cuda::structure_view& m, cuda::memory_resource& memory, cudaStream_t stream);

// What the planner reads of one matrix: its row_stats (diagonal_distance
// included) and, where `blocks`, its dense block sizes: the passes queued on
// `stream` and read back together, one synchronization for all (a Galerkin
// product's transpose and intermediate are fresh operands, measured on every
// level).
struct matrix_facts {
  row_stats rows;
  size_mask blocks = 0;
};
matrix_facts measure_matrix(const cuda::structure_view& m, bool blocks, cuda::memory_resource& memory,
                            cudaStream_t stream);

// The sizes (bit b for b in 2, 3, 4, 6) for which `m` has dense b x b block
// structure: one kernel over the entries for all candidate sizes; none where
// its shape allows none.
size_mask detect_block_sizes(const cuda::structure_view& m, cuda::memory_resource& memory, cudaStream_t stream);

// The hash method's limits for C = A * B with values of `value_bytes`: the
// device's largest tables, segment rows where their table of segment starts
// and their symbolic bitmap fit, the least bound of a segment row (tuning).
limits job_limits(const cuda::structure_view& a, const cuda::structure_view& b, std::size_t value_bytes,
                  const tuning& t);

// The counters of the statistics pass (unsigned long long, zeroed before).
namespace stats_counter {
inline constexpr int products = 0;
inline constexpr int bound = 1;         // sum over rows of min(products, cols of B)
inline constexpr int max_products = 2;  // of a row
inline constexpr int max_length = 3;    // of a row of A
inline constexpr int dense = 4;         // rows whose bound exceeds the largest numeric table
inline constexpr int symbolic_hist = 5;  // rows per symbolic bin, max_bins of them
inline constexpr int count = symbolic_hist + max_bins;
}  // namespace stats_counter

// The statistics pass: per row of A its products and symbolic bin (into
// `bins`, where given) and the nnz of the rows that need no symbolic kernel
// (into `row_nnz`, where given); the totals into `counters`.
void launch_stats(const cuda::structure_view& a, const cuda::structure_view& b, const limits& lim,
                  unsigned char* bins, offset_t* row_nnz, unsigned long long* counters, cudaStream_t stream);

// The product's statistics from the pass's counters, read back.
job_stats stats_of(const unsigned long long* counters, const cuda::structure_view& a, const cuda::structure_view& b);

// The pass on its own, with the limits of job_limits: what the estimates of
// the hash method and ESC read.
job_stats compute_stats(const cuda::structure_view& a, const cuda::structure_view& b, std::size_t value_bytes,
                        const tuning& t, cuda::memory_resource& memory, cudaStream_t stream);

}  // namespace spgemm::planner
