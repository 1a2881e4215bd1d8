#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <zlib.h>

#include "spgemm/errors.hpp"
#include "spgemm/io.hpp"
#include "spgemm/validate.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

class MatrixMarket : public ::testing::Test {
 protected:
  std::string path(const std::string& name) { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  void expect_rejected(const std::string& text, const std::string& fragment) {
    const auto file = write("bad.mtx", text);
    try {
      read_matrix_market(file);
      FAIL() << "accepted:\n" << text;
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), error_kind::bad_input);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_ = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("spgemm-mm-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(d);
    return d;
  }();
};

TEST_F(MatrixMarket, ReadsGeneralRealInAnyOrder) {
  const auto m = read_matrix_market(write("a.mtx",
                                          "%%MatrixMarket matrix coordinate real general\n% comment\n"
                                          "3 4 4\n3 2 -1.5\n1 4 2e1\n1 1 0.25\n3 3 7\n"));
  EXPECT_EQ(find_csr_problem(m), "");
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 4);
  EXPECT_EQ(m.row_offsets, (std::vector<offset_t>{0, 2, 2, 4}));
  EXPECT_EQ(m.col_indices, (std::vector<index_t>{0, 3, 1, 2}));
  EXPECT_EQ(m.values, (std::vector<double>{0.25, 20, -1.5, 7}));
}

TEST_F(MatrixMarket, ExpandsSymmetricAndReadsPatternAndInteger) {
  const auto sym = read_matrix_market(write("s.mtx",
                                            "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                            "3 3 3\n1 1\n2 1\n3 2\n"));
  EXPECT_EQ(sym.row_offsets, (std::vector<offset_t>{0, 2, 4, 5}));
  EXPECT_EQ(sym.col_indices, (std::vector<index_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ(sym.values, (std::vector<double>(5, 1.0)));
  const auto integer = read_matrix_market(write("i.mtx",
                                                "%%MatrixMarket matrix coordinate integer symmetric\n"
                                                "2 2 2\n1 1 -3\n2 1 4\n"));
  EXPECT_EQ(integer.values, (std::vector<double>{-3, 4, 4}));
}

TEST_F(MatrixMarket, RejectsMalformedFilesNamingTheLine) {
  expect_rejected("hello\n", "not a Matrix Market file");
  expect_rejected("%%MatrixMarket matrix array real general\n2 2\n", "only 'matrix coordinate'");
  expect_rejected("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "field 'complex'");
  expect_rejected("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "bad.mtx:3: entry (3, 1) is outside");
  expect_rejected("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", "declares 2 entries but the file has 1");
  expect_rejected("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1\n", "bad.mtx:3: expected a column index");
  expect_rejected("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n", "entry (1, 1) appears more than once");
  expect_rejected("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", "more entries than the 1");
  // Its mirrored entries would fall outside (the fuzzer's find: column 7 of 4).
  expect_rejected("%%MatrixMarket matrix coordinate pattern symmetric\n8 4 1\n7 4\n",
                  "bad.mtx:2: a symmetric matrix must be square, not 8 x 4");
}

TEST_F(MatrixMarket, MissingFileIsBadInput) {
  EXPECT_THROW(read_matrix_market(path("missing.mtx")), error);
}

TEST_F(MatrixMarket, RoundTripsExactlyPlainAndGzipped) {
  const auto m = testing::random_csr<double>(50, 70, 9, 7);
  for (const std::string name : {"r.mtx", "r.mtx.gz"}) {
    write_matrix_market(path(name), m);
    const auto back = read_matrix_market(path(name));
    EXPECT_EQ(back.row_offsets, m.row_offsets);
    EXPECT_EQ(back.col_indices, m.col_indices);
    EXPECT_EQ(back.values, m.values);
  }
  // The .gz file is really compressed.
  gzFile f = gzopen(path("r.mtx.gz").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(gzdirect(f), 0);
  gzclose(f);
}

TEST_F(MatrixMarket, FloatValuesRoundTrip) {
  const auto m = testing::random_csr<float>(20, 20, 5, 3);
  write_matrix_market(path("f.mtx"), m);
  const auto back = read_matrix_market(path("f.mtx"));
  ASSERT_EQ(back.values.size(), m.values.size());
  for (std::size_t k = 0; k < m.values.size(); ++k) EXPECT_EQ(static_cast<float>(back.values[k]), m.values[k]);
}

}  // namespace
}  // namespace spgemm
