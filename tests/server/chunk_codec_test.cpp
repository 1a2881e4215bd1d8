// The chunk codec: plan -> fill -> assemble round trips, and every way a
// stream of chunks can be wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "wire/chunk_codec.hpp"

namespace v1 = spgemm::v1;
using spgemm::wire::chunk_assembler;

namespace {

struct host_csr {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> cols_idx;
  std::vector<double> values;
  spgemm::wire::csr_view view() const {
    return {rows, cols, static_cast<int64_t>(cols_idx.size()), offsets.data(), cols_idx.data(), values.data(), v1::FLOAT64};
  }
};

host_csr random_csr(int64_t rows, int64_t cols, int max_row, unsigned seed, int dense_row = -1) {
  std::mt19937 rng(seed);
  host_csr m;
  m.rows = rows;
  m.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t len = r == dense_row ? cols : static_cast<int64_t>(rng() % static_cast<unsigned>(max_row + 1));
    for (int64_t k = 0; k < len && k < cols; ++k) {
      m.cols_idx.push_back(static_cast<int32_t>(k));
      m.values.push_back(static_cast<double>(rng() % 1000) / 7.0);
    }
    m.offsets.push_back(static_cast<int64_t>(m.cols_idx.size()));
  }
  return m;
}

std::vector<v1::MatrixChunk> encode(const host_csr& m, std::size_t chunk_bytes) {
  std::vector<v1::MatrixChunk> chunks;
  for (auto [b, e] : spgemm::wire::plan_row_blocks(m.view(), chunk_bytes)) {
    chunks.emplace_back();
    spgemm::wire::fill_chunk(m.view(), b, e, &chunks.back());
  }
  return chunks;
}

}  // namespace

TEST(chunk_codec, value_size) {
  EXPECT_EQ(spgemm::wire::value_size(v1::FLOAT32), 4u);
  EXPECT_EQ(spgemm::wire::value_size(v1::FLOAT64), 8u);
  EXPECT_EQ(spgemm::wire::value_size(v1::VALUE_TYPE_UNSPECIFIED), 0u);
}

TEST(chunk_codec, round_trip_under_chunk_limit) {
  for (std::size_t chunk_bytes : {std::size_t{256}, std::size_t{4096}, spgemm::wire::default_chunk_bytes}) {
    const host_csr m = random_csr(500, 300, 40, 7, /*dense_row=*/123);
    const auto chunks = encode(m, chunk_bytes);
    const v1::MatrixHeader h = spgemm::wire::header_of(m.view(), "x");
    ASSERT_TRUE(chunk_assembler::check_header(h).ok());
    chunk_assembler a(h);
    for (const auto& c : chunks) {
      // Only a chunk of one (over-long) row may exceed the limit.
      if (c.row_count() > 1) {
        EXPECT_LE(c.ByteSizeLong(), chunk_bytes);
      }
      ASSERT_TRUE(a.add(c).ok());
    }
    ASSERT_TRUE(a.finish().ok());
    EXPECT_EQ(a.rows_received(), m.rows);
    EXPECT_EQ(a.row_offsets(), m.offsets);
    EXPECT_EQ(a.col_indices(), m.cols_idx);
    EXPECT_TRUE(a.values_f32().empty());
    EXPECT_EQ(a.values_f64(), m.values);
  }
}

// A product in row panels streams before its size is known: the header says
// nnz -1 (results only, never an upload) and the arrays grow as chunks come.
TEST(chunk_codec, a_result_of_unknown_nnz_grows_as_it_comes) {
  const host_csr m = random_csr(500, 300, 40, 8, /*dense_row=*/17);
  v1::MatrixHeader h = spgemm::wire::header_of(m.view(), "x");
  h.set_nnz(chunk_assembler::unknown_nnz);
  EXPECT_EQ(chunk_assembler::check_header(h).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(chunk_assembler::check_header(h, /*result=*/true).ok());
  chunk_assembler a(h);
  for (const auto& c : encode(m, 4096)) ASSERT_TRUE(a.add(c).ok());
  ASSERT_TRUE(a.finish().ok());
  EXPECT_EQ(a.header().nnz(), static_cast<int64_t>(m.cols_idx.size()));
  EXPECT_EQ(a.row_offsets(), m.offsets);
  EXPECT_EQ(a.col_indices(), m.cols_idx);
  EXPECT_EQ(a.values_f64(), m.values);
}

TEST(chunk_codec, empty_shapes) {
  host_csr none;  // 0 x 0
  EXPECT_TRUE(spgemm::wire::plan_row_blocks(none.view(), 1024).empty());
  chunk_assembler a(spgemm::wire::header_of(none.view()));
  EXPECT_TRUE(a.finish().ok());

  host_csr empty_rows = random_csr(10, 10, 0, 1);  // rows without nonzeros
  const auto chunks = encode(empty_rows, 1024);
  chunk_assembler b(spgemm::wire::header_of(empty_rows.view()));
  for (const auto& c : chunks) ASSERT_TRUE(b.add(c).ok());
  EXPECT_TRUE(b.finish().ok());
}

TEST(chunk_codec, header_problems) {
  v1::MatrixHeader h;
  h.set_rows(-1);
  h.set_value_type(v1::FLOAT64);
  EXPECT_EQ(chunk_assembler::check_header(h).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  h.set_rows(3);
  h.set_cols(3);
  h.set_nnz(2);
  h.set_value_type(v1::VALUE_TYPE_UNSPECIFIED);
  EXPECT_EQ(chunk_assembler::check_header(h).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  h.set_value_type(v1::FLOAT32);
  EXPECT_TRUE(chunk_assembler::check_header(h).ok());
  h.set_index_type(v1::INT64);
  auto s = chunk_assembler::check_header(h);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("INT64"), std::string::npos);
  h.set_index_type(v1::INT32);
  h.set_nnz(10);  // more than 3 x 3
  EXPECT_EQ(chunk_assembler::check_header(h).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  h.set_nnz(2);
  h.set_cols(int64_t{1} << 40);
  EXPECT_EQ(chunk_assembler::check_header(h).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(chunk_codec, stream_problems) {
  const host_csr m = random_csr(100, 50, 10, 3);
  const auto chunks = encode(m, 256);
  ASSERT_GE(chunks.size(), 3u);
  const auto h = spgemm::wire::header_of(m.view());
  {  // out of order
    chunk_assembler a(h);
    auto s = a.add(chunks[1]);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("out of order"), std::string::npos);
  }
  {  // missing at the end
    chunk_assembler a(h);
    for (std::size_t i = 0; i + 1 < chunks.size(); ++i) ASSERT_TRUE(a.add(chunks[i]).ok());
    EXPECT_EQ(a.finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // truncated arrays
    chunk_assembler a(h);
    auto c = chunks[0];
    c.mutable_values()->resize(c.values().size() - 8);
    EXPECT_EQ(a.add(c).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    c = chunks[0];
    c.mutable_col_indices()->resize(c.col_indices().size() + 4);
    EXPECT_EQ(a.add(c).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    c = chunks[0];
    c.mutable_row_offsets()->resize(c.row_offsets().size() - 8);
    EXPECT_EQ(a.add(c).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // offsets not rebased, decreasing
    chunk_assembler a(h);
    auto c = chunks[0];
    int64_t one = 1;
    std::memcpy(c.mutable_row_offsets()->data(), &one, 8);
    EXPECT_EQ(a.add(c).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // more rows than the header
    v1::MatrixHeader small = h;
    small.set_rows(chunks[0].row_count() - 1);
    chunk_assembler a(small);
    EXPECT_EQ(a.add(chunks[0]).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // more nonzeros than the header
    v1::MatrixHeader small = h;
    small.set_nnz(0);
    chunk_assembler a(small);
    EXPECT_EQ(a.add(chunks[0]).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
}

namespace {

// Adds `m`'s chunks to an assembler that checks columns; the first error, or OK.
grpc::Status add_checked(const host_csr& m, std::size_t chunk_bytes) {
  chunk_assembler a(spgemm::wire::header_of(m.view()), /*check_columns=*/true);
  for (const auto& c : encode(m, chunk_bytes)) {
    if (grpc::Status s = a.add(c); !s.ok()) return s;
  }
  return a.finish();
}

}  // namespace

TEST(chunk_codec, column_checks) {
  // Valid matrices pass, in one chunk or many, with empty rows between full ones.
  for (std::size_t chunk_bytes : {std::size_t{256}, std::size_t{1} << 20}) {
    EXPECT_TRUE(add_checked(random_csr(300, 200, 30, 11), chunk_bytes).ok());
    EXPECT_TRUE(add_checked(random_csr(300, 200, 1, 12), chunk_bytes).ok());
  }
  // Rows of three columns (every seventh row empty); one entry made bad.
  host_csr m;
  m.rows = 300;
  m.cols = 200;
  for (int32_t r = 0; r < 300; ++r) {
    if (r % 7 != 0) {
      for (int32_t c : {r % 100, r % 100 + 1, r % 100 + 50}) {
        m.cols_idx.push_back(c);
        m.values.push_back(1.0);
      }
    }
    m.offsets.push_back(static_cast<int64_t>(m.cols_idx.size()));
  }
  struct bad_case {
    int64_t row;
    int32_t column;       // written at the row's second entry
    std::string message;  // what follows "(entry k) "
  };
  for (const bad_case& b : {bad_case{8, 200, "is outside [0, 200)"}, bad_case{150, -3, "is outside [0, 200)"},
                            bad_case{299, 99, "duplicates column 99"}, bad_case{299, 0, "comes after column 99"}}) {
    for (std::size_t chunk_bytes : {std::size_t{256}, std::size_t{1} << 20}) {
      host_csr bad = m;
      const auto k = static_cast<std::size_t>(bad.offsets[static_cast<std::size_t>(b.row)]) + 1;
      bad.cols_idx[k] = b.column;
      const grpc::Status s = add_checked(bad, chunk_bytes);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      const std::string expected = "not valid CSR: row " + std::to_string(b.row) + ": column " +
                                   std::to_string(b.column) + " (entry " + std::to_string(k) + ") " + b.message;
      EXPECT_NE(s.error_message().find(expected), std::string::npos) << s.error_message();
    }
  }
  // Without the check, the assembler takes the same columns.
  host_csr bad = m;
  bad.cols_idx[1] = -1;
  chunk_assembler unchecked(spgemm::wire::header_of(bad.view()));
  for (const auto& c : encode(bad, 1 << 20)) EXPECT_TRUE(unchecked.add(c).ok());
}

TEST(chunk_codec, reuses_arrays_large_enough) {
  const host_csr m = random_csr(400, 300, 20, 21);
  const auto h = spgemm::wire::header_of(m.view());
  spgemm::wire::csr_arrays spare;
  spare.row_offsets.reserve(m.offsets.size() + 10);
  spare.col_indices.reserve(m.cols_idx.size());
  spare.values_f64.reserve(m.values.size());
  spare.row_offsets.push_back(42);  // whatever they held goes
  const int64_t* offsets = spare.row_offsets.data();
  const int32_t* cols = spare.col_indices.data();
  const double* values = spare.values_f64.data();
  chunk_assembler a(h, true, std::move(spare));
  for (const auto& c : encode(m, 1024)) ASSERT_TRUE(a.add(c).ok());
  ASSERT_TRUE(a.finish().ok());
  EXPECT_EQ(a.row_offsets(), m.offsets);
  EXPECT_EQ(a.col_indices(), m.cols_idx);
  EXPECT_EQ(a.values_f64(), m.values);
  EXPECT_EQ(a.row_offsets().data(), offsets);
  EXPECT_EQ(a.col_indices().data(), cols);
  EXPECT_EQ(a.values_f64().data(), values);

  spgemm::wire::csr_arrays small;
  small.col_indices.reserve(m.cols_idx.size() / 2);
  chunk_assembler b(h, true, std::move(small));  // too small: fresh memory
  for (const auto& c : encode(m, 1024)) ASSERT_TRUE(b.add(c).ok());
  ASSERT_TRUE(b.finish().ok());
  EXPECT_EQ(b.col_indices(), m.cols_idx);
}

TEST(chunk_codec, large_matrix_mapped_ahead) {
  // Over 32 MiB of fresh arrays: mapped ahead on a thread of their own while the chunks come.
  host_csr m;
  m.rows = 1 << 16;
  m.cols = 64;
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int32_t c = 0; c < 64; ++c) {
      m.cols_idx.push_back(c);
      m.values.push_back(static_cast<double>(r + c));
    }
    m.offsets.push_back(static_cast<int64_t>(m.cols_idx.size()));
  }
  chunk_assembler a(spgemm::wire::header_of(m.view()), true);
  for (const auto& c : encode(m, spgemm::wire::default_chunk_bytes)) ASSERT_TRUE(a.add(c).ok());
  ASSERT_TRUE(a.finish().ok());
  EXPECT_EQ(a.row_offsets(), m.offsets);
  EXPECT_EQ(a.col_indices(), m.cols_idx);
  EXPECT_EQ(a.values_f64(), m.values);
}
