// Fuzzes the CSR validator (spgemm::find_csr_problem) with arrays of any
// lengths and contents: it must never read out of bounds, and a matrix it
// calls valid must be valid by a second, plain reading of the CSR rules.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "spgemm/validate.hpp"

namespace {

// The CSR rules, read plainly: whether `m` is valid.
bool plainly_valid(const spgemm::csr_matrix<double>& m) {
  if (m.rows < 0 || m.cols < 0 || m.cols > INT32_MAX) return false;
  if (m.row_offsets.size() != static_cast<std::size_t>(m.rows) + 1 || m.row_offsets[0] != 0) return false;
  if (m.col_indices.size() != m.values.size()) return false;
  if (m.row_offsets.back() != static_cast<int64_t>(m.col_indices.size())) return false;
  for (int64_t r = 0; r < m.rows; ++r) {
    if (m.row_offsets[r + 1] < m.row_offsets[r]) return false;
  }
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      if (m.col_indices[k] < 0 || m.col_indices[k] >= m.cols) return false;
      if (k > m.row_offsets[r] && m.col_indices[k] <= m.col_indices[k - 1]) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  spgemm::csr_matrix<double> m;
  m.rows = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-2, 48) : in.ConsumeIntegral<int64_t>();
  m.cols = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-2, 64) : in.ConsumeIntegral<int64_t>();
  m.row_offsets.clear();
  const auto offsets = in.ConsumeIntegralInRange<std::size_t>(0, 52);
  // Steps wrap around (in unsigned arithmetic): the harness itself must not overflow.
  auto step = [](auto at, auto by) { return static_cast<decltype(at)>(std::make_unsigned_t<decltype(at)>(at) + by); };
  int64_t at = 0;
  for (std::size_t i = 0; i < offsets; ++i) {
    // Mostly growing by a little, as real offsets do; sometimes anything.
    at = in.ConsumeBool() ? step(at, in.ConsumeIntegralInRange<int64_t>(-1, 4)) : in.ConsumeIntegral<int64_t>();
    m.row_offsets.push_back(i == 0 && in.ConsumeBool() ? 0 : at);
  }
  const auto entries = in.ConsumeIntegralInRange<std::size_t>(0, 200);
  int32_t col = 0;
  for (std::size_t k = 0; k < entries && in.remaining_bytes() > 0; ++k) {
    col = in.ConsumeBool() ? step(col, in.ConsumeIntegralInRange<int32_t>(-3, 5)) : in.ConsumeIntegral<int32_t>();
    m.col_indices.push_back(col);
  }
  const auto values = in.ConsumeBool() ? m.col_indices.size() : in.ConsumeIntegralInRange<std::size_t>(0, 200);
  for (std::size_t k = 0; k < values; ++k) m.values.push_back(in.ConsumeFloatingPoint<double>());

  const std::string problem = spgemm::find_csr_problem(m);
  if (problem.empty() != plainly_valid(m)) __builtin_trap();
  return 0;
}
