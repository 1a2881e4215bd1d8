// The client's own Matrix Market reader and writer, checked against the
// engine's reader (an independent implementation).
#include <filesystem>

#include <gtest/gtest.h>

#include "spgemm/client/error.hpp"
#include "spgemm/client/matrix_market.hpp"
#include "spgemm/io.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

namespace sc = spgemm::client;

void expect_same(const sc::csr_matrix& a, const spgemm::csr_matrix<double>& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.col_indices, b.col_indices);
  EXPECT_EQ(a.values, b.values);
}

sc::Error read_error(const std::string& path) {
  try {
    sc::read_matrix_market(path);
  } catch (const sc::Error& e) {
    return e;
  }
  ADD_FAILURE() << "reading " << path << " did not fail";
  return sc::Error(grpc::StatusCode::OK, "");
}

TEST(MatrixMarket, SymmetricPatternAndIntegerExpandSorted) {
  const auto path = scratch_path("sym.mtx");
  write_text(path,
             "%%MatrixMarket matrix coordinate integer symmetric\n"
             "% a comment\n"
             "\n"
             "3 3 4\n"
             "3 1 7\n"
             "1 1 2\n"
             "2 1 -1\n"
             "3 3 5\n");
  const auto m = sc::read_matrix_market(path);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 3, 4, 6}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int32_t>{0, 1, 2, 0, 0, 2}));
  EXPECT_EQ(m.values, (std::vector<double>{2, -1, 7, -1, 7, 5}));
  expect_same(m, spgemm::read_matrix_market(path));

  const auto pat = scratch_path("pattern.mtx");
  write_text(pat, "%%MatrixMarket matrix coordinate pattern general\n2 4 2\n2 4\n1 3\n");
  const auto p = sc::read_matrix_market(pat);
  EXPECT_EQ(p.cols, 4);
  EXPECT_EQ(p.col_indices, (std::vector<std::int32_t>{2, 3}));
  EXPECT_EQ(p.values, (std::vector<double>{1, 1}));
}

TEST(MatrixMarket, ErrorsNameTheLine) {
  const auto dup = scratch_path("dup.mtx");
  write_text(dup, "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n2 2 1.0\n1 1 3.0\n");
  auto e = read_error(dup);
  EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(e.message().find("line 5"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("duplicate entry (1, 1)"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("line 3"), std::string::npos) << e.message();

  const auto bad = scratch_path("bad.mtx");
  write_text(bad, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 x 1.0\n");
  e = read_error(bad);
  EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(e.message().find("line 4"), std::string::npos) << e.message();

  const auto range = scratch_path("range.mtx");
  write_text(range, "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n");
  EXPECT_NE(read_error(range).message().find("outside"), std::string::npos);

  const auto few = scratch_path("few.mtx");
  write_text(few, "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n");
  EXPECT_NE(read_error(few).message().find("declares 3"), std::string::npos);

  const auto banner = scratch_path("banner.mtx");
  write_text(banner, "hello\n");
  EXPECT_NE(read_error(banner).message().find("banner"), std::string::npos);

  const auto array = scratch_path("array.mtx");
  write_text(array, "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  EXPECT_NE(read_error(array).message().find("coordinate"), std::string::npos);

  e = read_error(scratch_path("does-not-exist.mtx"));
  EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(e.message().find("does-not-exist.mtx"), std::string::npos);
}

TEST(MatrixMarket, WriterRoundTripsExactlyPlainAndGz) {
  sc::csr_matrix m;
  m.rows = 3;
  m.cols = 5;
  m.row_offsets = {0, 2, 2, 4};
  m.col_indices = {1, 4, 0, 3};
  m.values = {0.1, -1e-300, 3.0 / 7.0, 12345678.9};
  for (const char* name : {"rt.mtx", "rt.mtx.gz"}) {
    const auto path = scratch_path(name);
    sc::write_matrix_market(path, m);
    const auto back = sc::read_matrix_market(path);
    EXPECT_EQ(back.row_offsets, m.row_offsets);
    EXPECT_EQ(back.col_indices, m.col_indices);
    EXPECT_EQ(back.values, m.values);
    expect_same(m, spgemm::read_matrix_market(path));
  }
}

TEST(MatrixMarket, WriterRenamesWhenCompleteAndLeavesNothingWhenStopped) {
  sc::csr_matrix m;
  m.rows = m.cols = 20000;
  m.row_offsets.resize(20001);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (std::int32_t c : {0, static_cast<std::int32_t>(r)}) {
      if (c == 0 && r == 0) continue;
      m.col_indices.push_back(c);
      m.values.push_back(1.0 / static_cast<double>(r + c + 1));
    }
    m.row_offsets[r + 1] = m.nnz();
  }
  const std::string dir = scratch_path("writer");
  std::filesystem::create_directories(dir);
  auto files = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
    return names;
  };
  // While it is written, only a hidden file stands beside the path.
  std::vector<std::string> seen;
  int calls = 0;
  sc::write_matrix_market(dir + "/C.mtx", m, [&](const sc::progress& p) {
    ++calls;
    if (!p.done) seen = files();
  });
  EXPECT_GE(calls, 2);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].rfind(".C.mtx.", 0), 0u) << seen[0];
  EXPECT_EQ(files(), std::vector<std::string>{"C.mtx"});
  expect_same(m, spgemm::read_matrix_market(dir + "/C.mtx"));

  // Stopped by its callback: neither the file nor the hidden one remains.
  struct stop {};
  EXPECT_THROW(sc::write_matrix_market(dir + "/D.mtx.gz", m, [](const sc::progress&) { throw stop{}; }), stop);
  EXPECT_EQ(files(), std::vector<std::string>{"C.mtx"});

  // A folder that does not exist: the path is named, no status name.
  try {
    sc::write_matrix_market(dir + "/no-such-dir/E.mtx", m);
    ADD_FAILURE() << "the write did not fail";
  } catch (const sc::Error& e) {
    EXPECT_NE(e.message().find("cannot write '" + dir + "/no-such-dir/E.mtx'"), std::string::npos) << e.message();
  }
}

TEST(MatrixMarket, SharedMatricesReadAsTheEngineReadsThem) {
  SPGEMM_NEED_MATRICES(dir);
  for (const char* name : {"bcsstk13.mtx.gz", "rajat01.mtx.gz", "ct2010.mtx.gz", "cage11.mtx.gz"}) {
    SCOPED_TRACE(name);
    const auto path = dir + "/" + name;
    expect_same(sc::read_matrix_market(path), spgemm::read_matrix_market(path));
  }
}

}  // namespace
}  // namespace spgemm::client_test
