// The arrays kept from finished uploads: what fits is handed out (the newest
// first), what does not is left, and the limit drops the oldest.
#include <gtest/gtest.h>

#include "rpc/spare_arrays.hpp"

using spgemmd::spare_arrays;
namespace v1 = spgemm::v1;

namespace {

// Arrays with room for `rows` rows and `nnz` float64 values.
spgemm::wire::csr_arrays arrays(std::size_t rows, std::size_t nnz) {
  spgemm::wire::csr_arrays a;
  a.row_offsets.reserve(rows + 1);
  a.col_indices.reserve(nnz);
  a.values_f64.reserve(nnz);
  return a;
}

}  // namespace

TEST(spare_arrays, hands_out_what_fits) {
  spare_arrays spares(1 << 20);
  spgemm::wire::csr_arrays a = arrays(100, 1000);
  const int32_t* cols = a.col_indices.data();
  spares.give(std::move(a));
  // Another value type, too many nonzeros, or arrays more than twice too large: none.
  EXPECT_EQ(spares.take(100, 1000, v1::FLOAT32).capacity_bytes(), 0u);
  EXPECT_EQ(spares.take(100, 1001, v1::FLOAT64).capacity_bytes(), 0u);
  EXPECT_EQ(spares.take(100, 400, v1::FLOAT64).capacity_bytes(), 0u);
  spgemm::wire::csr_arrays b = spares.take(90, 900, v1::FLOAT64);
  EXPECT_EQ(b.col_indices.data(), cols);
  EXPECT_EQ(spares.take(90, 900, v1::FLOAT64).capacity_bytes(), 0u);  // handed out once
}

TEST(spare_arrays, keeps_the_newest_within_the_limit) {
  const std::size_t one = arrays(100, 1000).capacity_bytes();
  spare_arrays spares(2 * one);
  spgemm::wire::csr_arrays first = arrays(100, 1000), second = arrays(100, 1000), third = arrays(100, 1000);
  const int32_t* second_cols = second.col_indices.data();
  const int32_t* third_cols = third.col_indices.data();
  spares.give(std::move(first));
  spares.give(std::move(second));
  spares.give(std::move(third));  // the first goes
  spares.give(arrays(1000, 100000));  // larger than the limit: not kept
  EXPECT_EQ(spares.take(100, 1000, v1::FLOAT64).col_indices.data(), third_cols);
  EXPECT_EQ(spares.take(100, 1000, v1::FLOAT64).col_indices.data(), second_cols);
  EXPECT_EQ(spares.take(100, 1000, v1::FLOAT64).capacity_bytes(), 0u);
}
