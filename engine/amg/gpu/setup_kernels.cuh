// The setup passes' kernels (setup.cu), after Bell, Dalton & Olson (2012), sections 3.1-3.4 and
// the appendix, each the parallel form of its CPU pass (amg/cpu/passes.hpp):
//  strength     a thread per node: its blocks' norms, the strong ones counted,
//               then written after the scan (two passes, no workspace per entry)
//  aggregate    rounds of the distance-2 independent set: a thread per node
//               computes its key, two sweeps take the largest key of a node
//               and its neighbours, a last one decides (amg/independent_set_rule.hpp);
//               then the roots numbered by a scan and two sweeps that hand
//               their numbers to the nodes one and two steps away
//  tentative    T's rows filled from the near null space, then a thread per
//               aggregate orthonormalizes its block in place (amg/tentative_rule.hpp)
//  prolongator  a thread per row merges T's row and A T's: counted, then written
// Work: a few passes over the strength graph per round (about ten rounds),
// one or two over A, T and A T; workspace: a few words per node.
#pragma once

#include <cstdint>

#include "amg/independent_set_rule.hpp"
#include "amg/tentative_rule.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::amg::gpu::kernels {

inline constexpr int setup_threads = 256;

// Blocks of setup_threads for n items (grid-stride loops beyond 2^20 blocks).
inline unsigned setup_blocks(std::int64_t n) {
  const std::int64_t b = (n + setup_threads - 1) / setup_threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > (1 << 20) ? (1 << 20) : b));
}

#define SPGEMM_AMG_FOR_EACH(i, n)                                                                   \
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// ---- strength ----

// The norm of block k of node i's row (block_size b: the Frobenius norm; 1:
// the entry itself), A made of dense b x b blocks.
__device__ __forceinline__ double block_norm(const offset_t* off, const double* val, int b, std::int64_t i,
                                             std::int64_t k) {
  if (b == 1) return val[off[i] + k];
  double sum = 0;
  for (int r = 0; r < b; ++r) {
    const offset_t first = off[i * b + r] + k * b;
    for (int c = 0; c < b; ++c) sum = __dadd_rn(sum, __dmul_rn(val[first + c], val[first + c]));
  }
  return sqrt(sum);
}

__global__ void __launch_bounds__(setup_threads)
    node_diagonal_kernel(std::int64_t nodes, int b, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                         const double* __restrict__ val, double* __restrict__ diagonal) {
  SPGEMM_AMG_FOR_EACH(i, nodes) {
    const std::int64_t blocks = (off[i * b + 1] - off[i * b]) / b;
    double d = 0;
    for (std::int64_t k = 0; k < blocks; ++k) {
      if (col[off[i * b] + k * b] / b == i) d = fabs(block_norm(off, val, b, i, k));
    }
    diagonal[i] = d;
  }
}

// write = false: the strong blocks of each node into count[i]; true: their
// columns from out_off[i] on.
template <bool write>
__global__ void __launch_bounds__(setup_threads)
    strong_kernel(std::int64_t nodes, int b, double theta, const offset_t* __restrict__ off,
                  const index_t* __restrict__ col, const double* __restrict__ val, const double* __restrict__ diagonal,
                  offset_t* __restrict__ out_off, index_t* __restrict__ out_col, float* __restrict__ out_val) {
  SPGEMM_AMG_FOR_EACH(i, nodes) {
    const std::int64_t blocks = (off[i * b + 1] - off[i * b]) / b;
    offset_t at = write ? out_off[i] : 0;
    for (std::int64_t k = 0; k < blocks; ++k) {
      const std::int64_t j = col[off[i * b] + k * b] / b;
      const double v = block_norm(off, val, b, i, k);
      if (j == i || v * v >= theta * theta * diagonal[i] * diagonal[j]) {
        if (write) {
          out_col[at] = static_cast<index_t>(j);
          out_val[at] = 1.0f;
        }
        ++at;
      }
    }
    if (!write) out_off[i] = at;
  }
}

// ---- aggregate ----

__global__ void __launch_bounds__(setup_threads)
    initial_state_kernel(std::int64_t n, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                         unsigned char* __restrict__ state) {
  SPGEMM_AMG_FOR_EACH(i, n) {
    bool isolated = true;
    for (offset_t k = off[i]; k < off[i + 1]; ++k) isolated = isolated && col[k] == i;
    state[i] = static_cast<unsigned char>(isolated ? state_out : state_undecided);
  }
}

__global__ void __launch_bounds__(setup_threads)
    key_kernel(std::int64_t n, const offset_t* __restrict__ off, const index_t* __restrict__ col,
               const unsigned char* __restrict__ state, unsigned long long* __restrict__ key) {
  SPGEMM_AMG_FOR_EACH(i, n) {
    std::int64_t neighbours = 0;
    for (offset_t k = off[i]; k < off[i + 1]; ++k) {
      const index_t j = col[k];
      neighbours += j != i && state[j] == state_undecided;
    }
    key[i] = node_key(state[i], neighbours, i);
  }
}

__global__ void __launch_bounds__(setup_threads)
    neighbourhood_max_kernel(std::int64_t n, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                             const unsigned long long* __restrict__ in, unsigned long long* __restrict__ out) {
  SPGEMM_AMG_FOR_EACH(i, n) {
    unsigned long long m = in[i];
    for (offset_t k = off[i]; k < off[i + 1]; ++k) m = max(m, in[col[k]]);
    out[i] = m;
  }
}

// Decides the undecided nodes; counts those left undecided.
__global__ void __launch_bounds__(setup_threads)
    decide_kernel(std::int64_t n, const unsigned long long* __restrict__ near, unsigned char* __restrict__ state,
                  unsigned long long* __restrict__ undecided) {
  SPGEMM_AMG_FOR_EACH(i, n) {
    if (state[i] != state_undecided) continue;
    const unsigned char s = static_cast<unsigned char>(decide(i, near[i]));
    state[i] = s;
    if (s == state_undecided) atomicAdd(undecided, 1ull);
  }
}

__global__ void __launch_bounds__(setup_threads)
    member_flag_kernel(std::int64_t n, const unsigned char* __restrict__ state, offset_t* __restrict__ flag) {
  SPGEMM_AMG_FOR_EACH(i, n) flag[i] = state[i] == state_member;
}

// The first sweep: a root's number, or the number of the root among one's
// neighbours (at most one: roots are three steps apart), else -1.
__global__ void __launch_bounds__(setup_threads)
    root_sweep_kernel(std::int64_t n, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                      const unsigned char* __restrict__ state, const offset_t* __restrict__ root_number,
                      index_t* __restrict__ first) {
  SPGEMM_AMG_FOR_EACH(i, n) {
    index_t a = state[i] == state_member ? static_cast<index_t>(root_number[i]) : -1;
    for (offset_t k = off[i]; a < 0 && k < off[i + 1]; ++k) {
      const index_t j = col[k];
      if (state[j] == state_member) a = static_cast<index_t>(root_number[j]);
    }
    first[i] = a;
  }
}

// The second sweep: the smallest aggregate among the neighbours of the
// first, for the nodes it left; flags the rows of the aggregation matrix.
__global__ void __launch_bounds__(setup_threads)
    neighbour_sweep_kernel(std::int64_t n, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                           const index_t* __restrict__ first, index_t* __restrict__ final_aggregate,
                           offset_t* __restrict__ has_aggregate) {
  SPGEMM_AMG_FOR_EACH(i, n) {
    index_t a = first[i];
    if (a < 0) {
      for (offset_t k = off[i]; k < off[i + 1]; ++k) {
        const index_t b = first[col[k]];
        if (b >= 0 && (a < 0 || b < a)) a = b;
      }
    }
    final_aggregate[i] = a;
    has_aggregate[i] = a >= 0;
  }
}

__global__ void __launch_bounds__(setup_threads)
    aggregation_entries_kernel(std::int64_t n, const index_t* __restrict__ final_aggregate,
                               const offset_t* __restrict__ off, index_t* __restrict__ col,
                               double* __restrict__ val) {
  SPGEMM_AMG_FOR_EACH(i, n) {
    if (final_aggregate[i] >= 0) {
      col[off[i]] = final_aggregate[i];
      val[off[i]] = 1.0;
    }
  }
}

// ---- tentative ----

// Rows of T: rows_per_node x columns entries for a node in an aggregate
// (count), none else.
__global__ void __launch_bounds__(setup_threads)
    tentative_count_kernel(std::int64_t nodes, int rows_per_node, int columns, const offset_t* __restrict__ agg_off,
                           offset_t* __restrict__ t_off) {
  SPGEMM_AMG_FOR_EACH(i, nodes) {
    const bool in = agg_off[i + 1] > agg_off[i];
    for (int r = 0; r < rows_per_node; ++r) t_off[i * rows_per_node + r] = in ? columns : 0;
  }
}

// T's entries: the node's rows of B in its aggregate's columns; each node's
// aggregate and node number as sort keys.
__global__ void __launch_bounds__(setup_threads)
    tentative_fill_kernel(std::int64_t nodes, int rows_per_node, int columns, const offset_t* __restrict__ agg_off,
                          const index_t* __restrict__ agg_col, std::int64_t count, const double* __restrict__ b,
                          const offset_t* __restrict__ t_off, index_t* __restrict__ t_col, double* __restrict__ t_val,
                          int* __restrict__ key, int* __restrict__ node) {
  SPGEMM_AMG_FOR_EACH(i, nodes) {
    const bool in = agg_off[i + 1] > agg_off[i];
    const index_t a = in ? agg_col[agg_off[i]] : static_cast<index_t>(count);
    key[i] = a;
    node[i] = static_cast<int>(i);
    if (!in) continue;
    for (int r = 0; r < rows_per_node; ++r) {
      const std::int64_t row = i * rows_per_node + r;
      for (int c = 0; c < columns; ++c) {
        t_col[t_off[row] + c] = static_cast<index_t>(static_cast<std::int64_t>(a) * columns + c);
        t_val[t_off[row] + c] = b[row * columns + c];
      }
    }
  }
}

// The block of one aggregate inside T's values: row p * rows_per_node + r of
// the block is row (member p) * rows_per_node + r of T.
struct aggregate_block {
  const int* members;
  const offset_t* t_off;
  double* t_val;
  int rows_per_node;
  __device__ double& operator()(std::int64_t i, int c) const {
    return t_val[t_off[static_cast<std::int64_t>(members[i / rows_per_node]) * rows_per_node + i % rows_per_node] +
                 c];
  }
};

// A thread per aggregate: its members (sorted by aggregate, then node) from
// start[a] on.
__global__ void __launch_bounds__(setup_threads)
    orthonormalize_kernel(std::int64_t count, int rows_per_node, int columns, const offset_t* __restrict__ start,
                          const int* __restrict__ members, const offset_t* __restrict__ t_off,
                          double* __restrict__ t_val, double* __restrict__ coarse) {
  SPGEMM_AMG_FOR_EACH(a, count) {
    const aggregate_block q{members + start[a], t_off, t_val, rows_per_node};
    orthonormalize(q, (start[a + 1] - start[a]) * rows_per_node, columns, coarse + a * columns * columns);
  }
}

// Where each aggregate's members start among the sorted keys (count + 1
// entries; the keys of nodes in none are `count`, last).
__global__ void __launch_bounds__(setup_threads)
    member_starts_kernel(std::int64_t nodes, std::int64_t count, const int* __restrict__ sorted_key,
                         offset_t* __restrict__ start) {
  SPGEMM_AMG_FOR_EACH(i, nodes) {
    const int k = sorted_key[i];
    const int before = i == 0 ? -1 : sorted_key[i - 1];
    for (int a = before + 1; a <= k && a <= count; ++a) start[a] = i;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && nodes > 0) {
    // Aggregates after the last member's (none: every aggregate has its root) and the end.
    for (std::int64_t a = sorted_key[nodes - 1] + 1; a <= count; ++a) start[a] = nodes;
  }
}

// ---- prolongator ----

// write = false: the merged length of T's and A T's row i into p_off[i];
// true: P's row: T - omega dinv_i (A T).
template <bool write>
__global__ void __launch_bounds__(setup_threads)
    prolongator_kernel(std::int64_t rows, std::int64_t cols, const offset_t* __restrict__ t_off,
                       const index_t* __restrict__ t_col, const double* __restrict__ t_val,
                       const offset_t* __restrict__ at_off, const index_t* __restrict__ at_col,
                       const double* __restrict__ at_val, const double* __restrict__ dinv, double omega,
                       offset_t* __restrict__ p_off, index_t* __restrict__ p_col, double* __restrict__ p_val) {
  SPGEMM_AMG_FOR_EACH(i, rows) {
    const double w = __dmul_rn(omega, dinv[i]);
    offset_t k = t_off[i], l = at_off[i], at = write ? p_off[i] : 0;
    const offset_t k_end = t_off[i + 1], l_end = at_off[i + 1];
    while (k < k_end || l < l_end) {
      const std::int64_t tc = k < k_end ? t_col[k] : cols;
      const std::int64_t ac = l < l_end ? at_col[l] : cols;
      const std::int64_t c = tc < ac ? tc : ac;
      double v = 0;
      if (tc == c) v = __dadd_rn(v, t_val[k++]);
      if (ac == c) v = __dadd_rn(v, -__dmul_rn(w, at_val[l++]));
      if (write) {
        p_col[at] = static_cast<index_t>(c);
        p_val[at] = v;
      }
      ++at;
    }
    if (!write) p_off[i] = at;
  }
}

#undef SPGEMM_AMG_FOR_EACH

}  // namespace spgemm::amg::gpu::kernels
