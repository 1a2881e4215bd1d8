#include "core/panels/host_gather.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "spgemm/errors.hpp"

namespace spgemmd::core {

namespace {

// Reserves `n` elements (address space only: pages come as they are written)
// and asks for transparent huge pages there: a fault per 2 MiB instead of
// per 4 KiB as the panels arrive.
template <typename V>
void reserve_huge(std::vector<V>& v, std::size_t n) {
  v.reserve(n);
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(v.data() + n)) & ~(huge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

host_gather::host_gather(matrix_cache& cache, const spgemm::matrix_info& shape, int64_t nnz_bound)
    : cache_(cache), held_(&cache) {
  // No more entries than the host budget could hold.
  const std::size_t entry = sizeof(spgemm::index_t) + spgemm::size_of(shape.type);
  const auto n = static_cast<std::size_t>(
      std::min<int64_t>(nnz_bound, static_cast<int64_t>(cache.stats().host_budget / entry)));
  auto start = [&](auto tag) {
    using T = decltype(tag);
    spgemm::csr_matrix<T> m;
    m.rows = 0;
    m.cols = shape.cols;
    m.row_offsets.reserve(static_cast<std::size_t>(shape.rows) + 1);
    reserve_huge(m.col_indices, n);
    reserve_huge(m.values, n);
    m_ = std::make_shared<spgemm::any_csr>(std::move(m));
  };
  if (shape.type == spgemm::value_type::f32) {
    start(float{});
  } else {
    start(double{});
  }
}

void host_gather::append(const device_panel& p) {
  const spgemm::matrix_info rows = p.rows->info();
  const std::size_t bytes = rows.bytes() - sizeof(spgemm::offset_t);  // the first offset is the one before
  if (!held_.try_grow(bytes)) {
    throw spgemm::error(spgemm::error_kind::does_not_fit,
                        "the product kept in host memory passes the host budget (" +
                            std::to_string(cache_.stats().host_budget) + " bytes, --host_budget_bytes) at row " +
                            std::to_string(p.first_row) + "; stream it instead, or raise the budget");
  }
  p.backend->append_rows(*p.rows, 0, rows.rows, *m_);
}

std::shared_ptr<const spgemm::any_csr> host_gather::finish() {
  if (!held_.try_grow(sizeof(spgemm::offset_t))) {
    throw spgemm::error(spgemm::error_kind::does_not_fit, "the product kept in host memory passes the host budget");
  }
  std::shared_ptr<const spgemm::any_csr> m = std::move(m_);
  return m;
}

}  // namespace spgemmd::core
