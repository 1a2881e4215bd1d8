// The setup passes of algebraic multigrid on host arrays (the CPU backend's
// amg::operations, and the oracle of the GPU's in the tests): the same
// algorithms the GPU kernels run (engine/amg/gpu/), written as loops, so
// that both give the same aggregates and patterns.
#pragma once

#include <cstdint>
#include <vector>

#include "spgemm/csr.hpp"

namespace spgemm::amg::cpu {

// The strength graph (operations::strength): nodes x nodes, values 1.
// Throws error(bad_input) where A is not made of dense block_size x
// block_size blocks.
csr_matrix<float> strength(const csr_matrix<double>& a, int block_size, double theta);

// A distance-2 maximal independent set of a symmetric graph, by rounds
// (amg/independent_set_rule.hpp): a node still undecided whose key is the
// largest within two steps joins the set; one with a member of the set
// within two steps leaves. Nodes without neighbours other than themselves
// never join.
struct independent_set {
  std::vector<char> member;  // per node
  int rounds = 0;
};
independent_set distance2_independent_set(const csr_matrix<float>& graph);

// Aggregates from the independent set (roots, numbered in node order), their
// neighbours, then the nodes two steps away by the smallest aggregate among
// their neighbours; -1: in no aggregate.
struct node_aggregates {
  std::vector<index_t> of_node;
  std::int64_t count = 0;
  int rounds = 0;
};
node_aggregates aggregate(const csr_matrix<float>& graph);
// As the matrix operations::aggregate returns: nodes x count, values 1.
csr_matrix<double> aggregation_matrix(const node_aggregates& a);

// T and the coarse near null space (operations::tentative), from the
// aggregation matrix.
struct tentative_result {
  csr_matrix<double> t;
  std::vector<double> coarse;  // (count * columns) x columns, row-major
};
tentative_result tentative(const csr_matrix<double>& aggregates, std::int64_t count, const std::vector<double>& b,
                           int rows_per_node, int columns);

// P = T - omega (dinv .* (A T)) on the union of the patterns of T and A T.
csr_matrix<double> smooth_prolongator(const csr_matrix<double>& t, const csr_matrix<double>& at,
                                      const std::vector<double>& dinv, double omega);

// The dense LU factors of A without pivoting (symmetric positive definite),
// row-major, and the solve with them. Throws error(bad_input) on a zero pivot.
std::vector<double> lu_factor(const csr_matrix<double>& a);
void lu_solve(const std::vector<double>& lu, std::int64_t n, const double* b, double* x);

}  // namespace spgemm::amg::cpu
