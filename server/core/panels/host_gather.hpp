// A result kept in host memory, gathered from its row panels in row order as
// they leave their devices: each panel's rows appended (copied once, from
// pinned staging into arrays reserved for the product's bound and advised
// onto huge pages), its bytes counted against the host budget as it grows.
#pragma once

#include <cstdint>
#include <memory>

#include "core/matrix_cache.hpp"
#include "core/panels/panel_stream.hpp"
#include "spgemm/csr.hpp"

namespace spgemmd::core {

class host_gather {
 public:
  // C of `shape` (its nnz unknown) with at most `nnz_bound` entries.
  host_gather(matrix_cache& cache, const spgemm::matrix_info& shape, int64_t nnz_bound);

  // Appends the next panel's rows. Throws spgemm::error(does_not_fit) where
  // they would pass the host budget.
  void append(const device_panel& p);
  // The matrix, once every panel was appended; its bytes stay in held().
  std::shared_ptr<const spgemm::any_csr> finish();
  host_reservation& held() { return held_; }

 private:
  matrix_cache& cache_;
  host_reservation held_;
  std::shared_ptr<spgemm::any_csr> m_;
};

}  // namespace spgemmd::core
