// The backend's part of algebraic multigrid (spgemm/amg.hpp): vectors and the
// passes of a setup and of a V-cycle that are neither products nor
// transposes. The CPU backend implements it on host arrays (engine/amg/cpu/),
// the GPU backend with kernels (engine/amg/gpu/); the setup and the solve
// (engine/amg/) are written once on top, so both run the same algorithm: the
// GPU's hierarchy is the CPU's, up to rounding.
//
// An operations object is one caller's (a setup step, a solve): calls run in
// order on it (on a GPU, on one stream: a call may return before its kernels
// finish; dot() and download() wait for them, and a stored matrix is
// complete when returned). Matrices are f64 and stored on the same backend.
// Every call that returns a matrix holds at most the bytes its *_bytes
// function below says (output and workspace; a GPU call enforces it) and
// throws error(does_not_fit) past `memory_limit`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "spgemm/backend.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::amg {

// f64 values on a backend.
class vector {
 public:
  virtual ~vector() = default;
  std::int64_t size() const { return size_; }
  std::size_t bytes() const { return static_cast<std::size_t>(size_) * sizeof(double); }

 protected:
  explicit vector(std::int64_t size) : size_(size) {}

 private:
  std::int64_t size_;
};

// The coarsest level's matrix, factored for direct solves.
class dense_factor {
 public:
  virtual ~dense_factor() = default;
  virtual std::size_t bytes() const = 0;
};

// Nodes grouped into aggregates.
struct aggregation {
  // nodes x count: one entry (value 1) per node that belongs to an
  // aggregate, in its aggregate's column; rows of nodes in none are empty.
  std::shared_ptr<stored_matrix> aggregates;
  std::int64_t count = 0;
  int rounds = 0;  // of the independent set
};

struct tentative_prolongator {
  // (nodes * rows_per_node) x (count * columns): the block of node i and
  // aggregate j holds rows_per_node x columns entries.
  std::shared_ptr<stored_matrix> t;
  // The coarse near null space: (count * columns) x columns, row-major.
  std::unique_ptr<vector> coarse;
};

class operations {
 public:
  virtual ~operations() = default;

  // Vectors. A term whose coefficient is 0 is not read (BLAS's rule): y =
  // 0 x + 0 y clears y whatever it held.
  virtual std::unique_ptr<vector> zeros(std::int64_t n) = 0;
  virtual std::unique_ptr<vector> upload(const double* values, std::int64_t n) = 0;
  // v_i = node_priority(i) scaled to [-1, 1): a start vector with every
  // eigenvector in it, the same on every backend, made where it lives.
  virtual std::unique_ptr<vector> hashed(std::int64_t n) = 0;
  virtual void download(const vector& v, double* out) = 0;
  virtual void copy(const vector& from, vector& to) = 0;
  // y = a x + b y.
  virtual void axpby(double a, const vector& x, double b, vector& y) = 0;
  // y = a (d .* x) + b y (elementwise).
  virtual void scaled_axpby(double a, const vector& d, const vector& x, double b, vector& y) = 0;
  virtual double dot(const vector& x, const vector& y) = 0;
  // y = alpha A x + beta y.
  virtual void spmv(const stored_matrix& a, const vector& x, double alpha, double beta, vector& y) = 0;
  // The Lanczos recurrence on S A S (S = diag(s)) from hashed(n), normalized:
  // the diagonal `alpha` and off-diagonal `beta` of its tridiagonal matrix
  // after min(steps, n) steps, fewer at an invariant subspace (beta_k <=
  // 1e-12 |alpha_k|). This default (spectral_radius.cpp) runs the vector
  // calls above, two dot products read back per step; a backend may keep the
  // scalars where the vectors live.
  virtual void lanczos(const stored_matrix& a, const vector& s, int steps, std::vector<double>& alpha,
                       std::vector<double>& beta);
  // 1 / a_ii, or |a_ii|^-1/2 with `square_root`; throws error(bad_input)
  // naming the first row without a nonzero diagonal.
  virtual std::unique_ptr<vector> inverse_diagonal(const stored_matrix& a, bool square_root) = 0;
  // Both at once, as two inverse_diagonal calls give them; this default makes
  // those two calls, a backend may read A's diagonal once for both.
  struct diagonal_inverses {
    std::unique_ptr<vector> inverse;       // 1 / a_ii
    std::unique_ptr<vector> inverse_sqrt;  // |a_ii|^-1/2
  };
  virtual diagonal_inverses inverse_diagonals(const stored_matrix& a);

  // Setup passes.
  // Unknowns per node: the largest size of dense blocks A is made of
  // (planner/block_structure.hpp), 1 where none.
  virtual int node_size(const stored_matrix& a) = 0;
  // The strong connections between the nodes of A (block_size unknowns
  // each; rows of A a multiple of it), the diagonal always: nodes x nodes,
  // values 1. With block_size > 1, a_ij is the Frobenius norm of the block
  // of nodes i and j (pyamg's measure for block matrices); theta = 0 keeps
  // every node pair A couples.
  virtual std::shared_ptr<stored_matrix> strength(const stored_matrix& a, int block_size, double theta,
                                                  std::size_t memory_limit) = 0;
  // Aggregates of a symmetric strength graph (amg.hpp describes them).
  virtual aggregation aggregate(const stored_matrix& graph, std::size_t memory_limit) = 0;
  // T from the aggregates and the near null space b ((nodes * rows_per_node)
  // x columns, row-major).
  virtual tentative_prolongator tentative(const stored_matrix& aggregates, std::int64_t count, const vector& b,
                                          int rows_per_node, int columns, std::size_t memory_limit) = 0;
  // P = T - omega (dinv .* (A T)) row by row, on the union of the patterns
  // of T and A T (the entries of either, cancelled or not).
  virtual std::shared_ptr<stored_matrix> smooth_prolongator(const stored_matrix& t, const stored_matrix& at,
                                                            const vector& dinv, double omega,
                                                            std::size_t memory_limit) = 0;
  // Coarsest level: A factored (symmetric positive definite: no pivoting;
  // a zero pivot throws error(bad_input)), and x = A^-1 b.
  virtual std::unique_ptr<dense_factor> factor(const stored_matrix& a, std::size_t memory_limit) = 0;
  virtual void solve(const dense_factor& f, const vector& b, vector& x) = 0;
};

// What the setup passes hold at most, output and workspace (the bytes each
// implementation keeps to).
std::size_t strength_bytes(const matrix_info& a, int block_size);
std::size_t aggregate_bytes(const matrix_info& graph);
std::size_t tentative_bytes(const matrix_info& aggregates, std::int64_t count, int rows_per_node, int columns);
std::size_t prolongator_bytes(const matrix_info& t, const matrix_info& at);
std::size_t factor_bytes(const matrix_info& a);

}  // namespace spgemm::amg
