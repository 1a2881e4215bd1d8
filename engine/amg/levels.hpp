// A hierarchy as the builder makes it and the cycle runs it (spgemm/amg.hpp):
// its levels, and what each keeps for the V-cycle and for a re-setup.
#pragma once

#include <memory>
#include <vector>

#include "amg/operations.hpp"
#include "spgemm/amg.hpp"
#include "spgemm/galerkin.hpp"

namespace spgemm::amg {

struct level {
  std::shared_ptr<stored_matrix> a;  // A_k
  int block_size = 1;                // unknowns per node of A_k
  // Below the coarsest level:
  std::shared_ptr<stored_matrix> p, r;  // P_k, R_k = P_k^T
  std::unique_ptr<vector> dinv;         // 1 / a_ii
  double rho = 0;                       // of D^-1 A_k
  // Kept for a re-setup: T_k, and the structures of A_k T_k and of the
  // Galerkin product's first product (A_k P_k or R_k A_k).
  std::shared_ptr<stored_matrix> t, at, first;
  galerkin_order order = galerkin_order::right_first;
};

class levels_hierarchy final : public hierarchy {
 public:
  levels_hierarchy(std::shared_ptr<backend> on, setup_options options)
      : on_(std::move(on)), options_(std::move(options)) {}

  const setup_report& report() const override { return report_; }
  std::shared_ptr<stored_matrix> a(std::size_t k) const override { return levels_.at(k).a; }
  std::shared_ptr<stored_matrix> p(std::size_t k) const override { return levels_.at(k).p; }
  std::shared_ptr<stored_matrix> r(std::size_t k) const override { return levels_.at(k).r; }
  std::size_t own_bytes() const override;
  std::size_t solve_bytes() const override;
  solve_report solve(const std::vector<double>& b, std::vector<double>& x, const solve_options& options,
                     const cancel_token& cancel) override;
  void precondition(const std::vector<double>& r, std::vector<double>& z, const solve_options& options) override;

  // The builder's.
  std::shared_ptr<backend> on_;
  setup_options options_;
  std::vector<level> levels_;
  std::unique_ptr<dense_factor> coarse_;
  setup_report report_;
};

}  // namespace spgemm::amg
