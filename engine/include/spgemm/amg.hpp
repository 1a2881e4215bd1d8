// Algebraic multigrid by smoothed aggregation (Vanek, Mandel & Brezina 1996),
// set up and cycled on one backend as Bell, Dalton & Olson (2012) do on the
// GPU: every step a parallel pass over the matrix, the products by the
// backend's SpGEMM. The solver is a V-cycle used as the preconditioner of CG.
//
// Setup, level k after level k (A_0 = A):
//   strength   C_k: the strong connections between nodes (|a_ij| >= theta
//              sqrt(|a_ii a_jj|), pyamg's symmetric measure; nodes of dense
//              b x b blocks by the Frobenius norms of their blocks)
//   aggregate  roots from a distance-2 maximal independent set of C_k
//              (Bell et al., appendix: rounds until every node is decided;
//              the nodes with the fewest undecided neighbours first, then
//              hashed priorities), their neighbours, then the nodes two steps
//              away joined to the aggregate of a neighbour (the smallest);
//              nodes without strong neighbours in no aggregate
//   tentative  T_k: the near-null-space vectors cut to the aggregates, their
//              columns orthonormal per aggregate (modified Gram-Schmidt, as
//              pyamg's fit_candidates), and B_{k+1} the coarse vectors
//   smooth     P_k = T_k - omega / rho(D^-1 A_k) D^-1 (A_k T_k), rho from
//              Lanczos steps on D^-1/2 A_k D^-1/2
//   galerkin   R_k = P_k^T by the backend's transpose, A_{k+1} = R_k A_k P_k
//              in the cheaper association order (spgemm/galerkin.hpp)
// until A_k has at most max_coarse rows (or max_levels); the last level is
// solved densely. Products keep their structural entries (values that cancel
// to zero stay), so a hierarchy's patterns depend on A's pattern alone and a
// new set of values re-sets it up without any symbolic phase (builder's
// second constructor): aggregates, tentative prolongators and the structures
// of every product are kept.
//
// Values are f64 throughout: A must be f64 and square with a nonzero
// diagonal; its strength graph symmetric (A's pattern is); CG needs A
// symmetric positive definite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spgemm/backend.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::amg {

struct setup_options {
  // Strength of connection: 0 keeps every entry of A (pyamg's default).
  double strength_theta = 0.0;
  // ... and on every level below the first at least this: the parallel
  // aggregation's coarse operators carry more weak couplings than pyamg's
  // (less regular aggregates), and a distance-2 set over them coarsens too
  // hard. CPU path, CG to 1e-8, iterations with 0 / 0.05 (pyamg): 2-D
  // Poisson 1024^2 19 / 15 (13), 9-point 18 / 13 (12), elasticity3d:30 17 / 15
  // (14), 3-D Poisson 80^3 13 / 12; 0.1 coarsened 3-D Poisson too hard (20).
  double coarse_strength_theta = 0.05;
  // Coarsen until a level has at most this many rows, or max_levels levels.
  std::int64_t max_coarse = 1000;
  int max_levels = 10;
  // P = (I - omega / rho(D^-1 A) D^-1 A) T.
  double prolongator_omega = 4.0 / 3.0;
  // Lanczos steps for rho(D^-1 A) on every level (prolongator and smoother).
  int spectral_steps = 15;
  // Unknowns per node of A: 0 finds it (the largest size of dense blocks A
  // is made of, spgemm's block rule), 1 treats every unknown as a node.
  int block_size = 0;
  // The near null space, rows of A x near_nullspace_columns, row-major;
  // empty: the constant vector (scalar problems). Elasticity: the six
  // rigid-body modes.
  std::vector<double> near_nullspace;
  int near_nullspace_columns = 0;
  // The products' method and tuning (output_type is f64).
  multiply_options products;
};

enum class smoother {
  jacobi,     // x += omega / rho(D^-1 A) D^-1 (b - A x)
  chebyshev,  // x += p(D^-1 A) D^-1 (b - A x): the Chebyshev polynomial of
              // 1/x on [rho / 30, 1.1 rho] (pyamg's bounds and coefficients)
};

struct solve_options {
  double tolerance = 1e-8;  // stop at ||b - A x|| <= tolerance ||b||
  int max_iterations = 500;
  // CG preconditioned by one V-cycle per iteration; false: V-cycles alone.
  bool conjugate_gradient = true;
  smoother smoothing = smoother::chebyshev;
  int chebyshev_degree = 3;
  double jacobi_omega = 1.0;  // scaled by 1 / rho(D^-1 A)
  int presweeps = 1;
  int postsweeps = 1;
};

struct level_summary {
  std::int64_t rows = 0;
  std::int64_t nnz = 0;
  int block_size = 1;  // unknowns per node
};

// Seconds of a setup by phase (a re-setup has no strength, aggregation or
// tentative phase, and runs its products numeric only).
struct setup_times {
  double strength = 0, aggregation = 0, tentative = 0, spectral_radius = 0, smoothing = 0, transpose = 0,
         galerkin = 0, coarse_solver = 0;
  double total() const {
    return strength + aggregation + tentative + spectral_radius + smoothing + transpose + galerkin + coarse_solver;
  }
};

struct setup_report {
  std::vector<level_summary> levels;
  double operator_complexity = 0;  // sum of nnz(A_k) / nnz(A_0)
  double grid_complexity = 0;      // sum of rows(A_k) / rows(A_0)
  setup_times seconds;
  bool numeric_only = false;  // a re-setup with new values
  int mis_rounds = 0;         // rounds of the independent sets, all levels
  std::string methods;        // the methods of the products (Galerkin order and SpGEMM)
};

struct solve_report {
  int iterations = 0;
  std::vector<double> residuals;  // ||b - A x|| / ||b||: before the first iteration, then after each
  bool converged = false;
  double seconds = 0;
};

class operations;  // the backend's part of a setup and a solve (engine/amg/operations.hpp)

// A hierarchy on one backend: the matrices of its levels and what its
// V-cycle keeps of them (inverse diagonals, rho, the coarsest level's dense
// factorization), plus what a re-setup reuses.
class hierarchy {
 public:
  virtual ~hierarchy() = default;

  virtual const setup_report& report() const = 0;
  std::size_t levels() const { return report().levels.size(); }
  // A_k (k < levels()); P_k and R_k = P_k^T (k < levels() - 1).
  virtual std::shared_ptr<stored_matrix> a(std::size_t k) const = 0;
  virtual std::shared_ptr<stored_matrix> p(std::size_t k) const = 0;
  virtual std::shared_ptr<stored_matrix> r(std::size_t k) const = 0;
  // Bytes it holds on its backend besides A_k, P_k and R_k (A_0 is the caller's).
  virtual std::size_t own_bytes() const = 0;

  // Bytes a solve allocates on the backend (its vectors), at most.
  virtual std::size_t solve_bytes() const = 0;
  // x for A x = b (x holds the first guess; resized to rows of A, zeros,
  // where its size differs). Polls `cancel` every iteration.
  virtual solve_report solve(const std::vector<double>& b, std::vector<double>& x, const solve_options& options,
                             const cancel_token& cancel = {}) = 0;
  // z = M^-1 r: one V-cycle from zero (the preconditioner CG applies).
  virtual void precondition(const std::vector<double>& r, std::vector<double>& z, const solve_options& options) = 0;
};

// A setup as a course of steps, each sized before it runs (a caller admits
// them one by one: the server does, as the steps of a job), or all at once
// (build). Not thread-safe; its backend's calls are.
class builder {
 public:
  // A new hierarchy of `a`.
  builder(std::shared_ptr<backend> on, std::shared_ptr<stored_matrix> a, setup_options options);
  // `previous` again with the values of `a`, whose pattern is that of
  // previous's A_0: only rho, the smoothed prolongators, the transposes and
  // the Galerkin products are computed again, the products numeric only.
  builder(std::shared_ptr<backend> on, const hierarchy& previous, std::shared_ptr<stored_matrix> a);
  ~builder();
  builder(const builder&) = delete;
  builder& operator=(const builder&) = delete;

  bool done() const;
  // The next step, e.g. "aggregate 1" (level 1).
  std::string next_step() const;
  // What the next step allocates at most (its estimate; it may run kernels).
  memory_estimate estimate();
  // Runs the next step, holding at most `memory_limit` bytes (its estimate,
  // as the caller admitted it) beyond what the setup held before; throws
  // error(does_not_fit) past it.
  void run(std::size_t memory_limit, const cancel_token& cancel = {});
  // What the setup holds on the backend between steps (levels so far and
  // what they keep; A_0 excluded).
  std::size_t held_bytes() const;
  // Once done: the hierarchy.
  std::shared_ptr<hierarchy> finish();

  // Every step in turn, each within its own estimate.
  static std::shared_ptr<hierarchy> build(std::shared_ptr<backend> on, std::shared_ptr<stored_matrix> a,
                                          const setup_options& options, const cancel_token& cancel = {});
  static std::shared_ptr<hierarchy> rebuild(std::shared_ptr<backend> on, const hierarchy& previous,
                                            std::shared_ptr<stored_matrix> a, const cancel_token& cancel = {});

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// The smoother names clients send: "jacobi", "chebyshev". Throws error(bad_input).
smoother parse_smoother(std::string_view name);
std::string_view to_string(smoother s);

}  // namespace spgemm::amg
