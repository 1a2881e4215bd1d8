// The `spgemm` CLI against a real spgemmd: every subcommand on shared
// matrices, the example matrix the repository ships and generated operands,
// output files checked against the engine's CPU reference (read back with
// the engine's own reader), and the error paths with their exit codes and
// messages (the same as spgemm-bench's for bad input).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"
#include "spgemm/reference.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

using matrix = spgemm::csr_matrix<double>;

run_result cli(const std::vector<std::string>& args) { return run_cli(args, test_server::address()); }

#define EXPECT_EXIT_CODE(r, code) \
  EXPECT_EQ((r).exit_code, code) << "stdout:\n" << (r).out << "\nstderr:\n" << (r).err

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

// Handles listed by `spgemm ls`.
std::vector<std::string> listed_handles() {
  auto r = cli({"ls"});
  EXPECT_EXIT_CODE(r, 0);
  std::vector<std::string> out;
  for (const auto& l : lines(r.out)) {
    if (l.rfind("m-", 0) == 0) out.push_back(l.substr(0, l.find(' ')));
  }
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Same structure, and values within `tol` of the reference relative to the
// largest magnitude in their row.
void expect_close(const matrix& c, const matrix& ref, double tol) {
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  for (std::int64_t r = 0; r < ref.rows; ++r) {
    double scale = 0;
    for (auto k = ref.row_offsets[r]; k < ref.row_offsets[r + 1]; ++k) scale = std::max(scale, std::abs(ref.values[k]));
    for (auto k = ref.row_offsets[r]; k < ref.row_offsets[r + 1]; ++k) {
      ASSERT_LE(std::abs(c.values[k] - ref.values[k]), tol * std::max(scale, 1e-300))
          << "row " << r << " col " << ref.col_indices[k];
    }
  }
}

// Aggregation prolongator: fine row i -> coarse column i / 2.
matrix aggregation(std::int64_t fine) {
  matrix p;
  p.rows = fine;
  p.cols = (fine + 1) / 2;
  for (std::int64_t i = 0; i < fine; ++i) {
    p.col_indices.push_back(static_cast<index_t>(i / 2));
    p.values.push_back(1.0 + 0.25 * static_cast<double>(i % 3));
    p.row_offsets.push_back(i + 1);
  }
  return p;
}

class CliShared : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(test_server::address().empty());
  }
};

TEST_F(CliShared, MultiplySquaresMatchTheReferenceAndLeaveNothingBehind) {
  SPGEMM_NEED_MATRICES(dir);
  const auto before = listed_handles();
  for (const char* name : {"cryg2500", "bcsstk13", "rajat01", "hep-th", "mbeacxc", "bayer10"}) {
    SCOPED_TRACE(name);
    const std::string in = dir + "/" + name + ".mtx.gz";
    const std::string out = scratch_path(std::string(name) + ".sq.mtx");
    auto r = cli({"multiply", in, "-o", out});
    EXPECT_EXIT_CODE(r, 0);
    if (r.exit_code != 0) continue;
    const matrix a = spgemm::read_matrix_market(in);
    const matrix c = spgemm::read_matrix_market(out);
    const matrix ref = spgemm::cpu_multiply(a, a, 2);
    ASSERT_EQ(c.row_offsets, ref.row_offsets);
    ASSERT_EQ(c.col_indices, ref.col_indices);
    EXPECT_LE(spgemm::scaled_max_error(c, ref, a, a), 1e-14);
  }
  EXPECT_EQ(listed_handles(), before) << "temporary operands were left on the server";
}

TEST_F(CliShared, MultiplyTwoOperandsWithAlgorithmStatsAndGzOutput) {
  SPGEMM_NEED_MATRICES(dir);
  const std::string in = dir + "/bayer10.mtx.gz";
  const matrix a = spgemm::read_matrix_market(in);
  const matrix at = spgemm::cpu_transpose(a);
  const std::string bt = scratch_path("bayer10.t.mtx");
  spgemm::write_matrix_market(bt, at);
  const std::string out = scratch_path("bayer10.aat.mtx.gz");
  auto r = cli({"multiply", in, bt, "-o", out, "--algorithm", "auto", "--stats"});
  EXPECT_EXIT_CODE(r, 0);
  EXPECT_TRUE(contains(r.err, "GFLOPS")) << r.err;
  EXPECT_TRUE(contains(r.err, "nnz")) << r.err;
  EXPECT_TRUE(contains(r.err, "uploaded")) << r.err;
  const matrix c = spgemm::read_matrix_market(out);
  const matrix ref = spgemm::cpu_multiply(a, at, 2);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  EXPECT_LE(spgemm::scaled_max_error(c, ref, a, at), 1e-14);
}

TEST_F(CliShared, TransposeMatchesTheReference) {
  SPGEMM_NEED_MATRICES(dir);
  const std::string in = dir + "/cage11.mtx.gz";
  const std::string out = scratch_path("cage11.t.mtx");
  auto r = cli({"transpose", in, "-o", out});
  EXPECT_EXIT_CODE(r, 0);
  const matrix t = spgemm::read_matrix_market(out);
  const matrix ref = spgemm::cpu_transpose(spgemm::read_matrix_market(in));
  EXPECT_EQ(t.row_offsets, ref.row_offsets);
  EXPECT_EQ(t.col_indices, ref.col_indices);
  EXPECT_EQ(t.values, ref.values);
}

TEST_F(CliShared, GalerkinBothFormsMatchTheReference) {
  SPGEMM_NEED_MATRICES(dir);
  const std::string in = dir + "/cryg2500.mtx.gz";
  const matrix a = spgemm::read_matrix_market(in);
  const matrix p = aggregation(a.rows);
  const matrix pt = spgemm::cpu_transpose(p);
  const std::string p_file = scratch_path("P.mtx");
  const std::string r_file = scratch_path("R.mtx.gz");
  spgemm::write_matrix_market(p_file, p);
  spgemm::write_matrix_market(r_file, pt);
  const matrix ref = spgemm::cpu_multiply(spgemm::cpu_multiply(pt, a, 1), p, 1);

  const std::string out = scratch_path("Ac.mtx");
  auto r = cli({"galerkin", p_file, in, "-o", out});
  EXPECT_EXIT_CODE(r, 0);
  expect_close(spgemm::read_matrix_market(out), ref, 1e-12);

  const std::string out2 = scratch_path("Ac2.mtx");
  r = cli({"galerkin", r_file, in, "--form", "papt", "-o", out2});
  EXPECT_EXIT_CODE(r, 0);
  expect_close(spgemm::read_matrix_market(out2), ref, 1e-12);
}

TEST_F(CliShared, UploadLsDownloadKeepHandlesAndRm) {
  SPGEMM_NEED_MATRICES(dir);
  const std::string in = dir + "/hep-th.mtx.gz";
  auto up = cli({"upload", in, dir + "/rajat01.mtx.gz"});
  EXPECT_EXIT_CODE(up, 0);
  const auto handles = lines(up.out);
  ASSERT_EQ(handles.size(), 2u) << up.out;
  const std::string h = handles[0];
  EXPECT_EQ(h.rfind("m-", 0), 0u) << h;

  auto ls = cli({"ls"});
  EXPECT_EXIT_CODE(ls, 0);
  EXPECT_TRUE(contains(ls.out, h)) << ls.out;
  EXPECT_TRUE(contains(ls.out, "hep-th.mtx.gz")) << ls.out;
  EXPECT_TRUE(contains(ls.out, "rajat01.mtx.gz")) << ls.out;

  const matrix a = spgemm::read_matrix_market(in);
  const std::string copy = scratch_path("hep-th.copy.mtx");
  auto dl = cli({"download", h, "-o", copy});
  EXPECT_EXIT_CODE(dl, 0);
  const matrix back = spgemm::read_matrix_market(copy);
  EXPECT_EQ(back.row_offsets, a.row_offsets);
  EXPECT_EQ(back.col_indices, a.col_indices);
  EXPECT_EQ(back.values, a.values);

  // Handles as operands, result kept: the handle on stdout, stats on stderr.
  auto kept = cli({"multiply", h, h, "--keep", "--stats"});
  EXPECT_EXIT_CODE(kept, 0);
  const auto kept_lines = lines(kept.out);
  ASSERT_EQ(kept_lines.size(), 1u) << kept.out;
  const std::string hc = kept_lines[0];
  EXPECT_EQ(hc.rfind("m-", 0), 0u);
  EXPECT_TRUE(contains(kept.err, "GFLOPS")) << kept.err;
  const std::string c_file = scratch_path("hep-th.sq.mtx.gz");
  dl = cli({"download", hc, "-o", c_file});
  EXPECT_EXIT_CODE(dl, 0);
  const matrix c = spgemm::read_matrix_market(c_file);
  const matrix ref = spgemm::cpu_multiply(a, a, 2);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  EXPECT_LE(spgemm::scaled_max_error(c, ref, a, a), 1e-14);
  // The operands given as handles are still there.
  auto all = listed_handles();
  EXPECT_NE(std::find(all.begin(), all.end(), h), all.end());

  // A kept transpose of a file: its operand is kept too with --keep.
  auto kt = cli({"transpose", in, "--keep"});
  EXPECT_EXIT_CODE(kt, 0);
  EXPECT_TRUE(contains(kt.err, "kept operand")) << kt.err;
  const std::string ht = lines(kt.out).at(0);
  const std::string hop = kt.err.substr(kt.err.find("m-"), kt.err.find('\n', kt.err.find("m-")) - kt.err.find("m-"));

  auto rm = cli({"rm", h, handles[1], hc, ht, hop});
  EXPECT_EXIT_CODE(rm, 0);
  EXPECT_EQ(lines(rm.out).size(), 5u) << rm.out;
  EXPECT_TRUE(contains(rm.out, "deleted " + h)) << rm.out;
  all = listed_handles();
  for (const auto& x : {h, handles[1], hc, ht, hop}) EXPECT_EQ(std::find(all.begin(), all.end(), x), all.end()) << x;

  rm = cli({"rm", h});
  EXPECT_EXIT_CODE(rm, 2);
  EXPECT_TRUE(contains(rm.err, "NOT_FOUND")) << rm.err;
}

// The example matrix the repository ships; where the tests run away from the
// source tree (the GPU host's package), the same file among the shared matrices.
std::string example_matrix() {
  const std::string in_tree = std::string(SPGEMM_EXAMPLES_DIR) + "/bcsstk13.mtx.gz";
  if (::access(in_tree.c_str(), R_OK) == 0 || matrices_dir().empty()) return in_tree;
  return matrices_dir() + "/bcsstk13.mtx.gz";
}

TEST(CliOperands, SquaresTheExampleMatrixTheRepositoryShips) {
  const std::string in = example_matrix();
  const std::string out = scratch_path("bcsstk13.sq.mtx");
  auto r = cli({"multiply", in, "-o", out, "--stats"});
  EXPECT_EXIT_CODE(r, 0);
  EXPECT_TRUE(contains(r.err, "GFLOPS")) << r.err;
  const matrix a = spgemm::read_matrix_market(in);
  const matrix c = spgemm::read_matrix_market(out);
  const matrix ref = spgemm::cpu_multiply(a, a, 2);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  EXPECT_LE(spgemm::scaled_max_error(c, ref, a, a), 1e-14);
}

TEST(CliOperands, GeneratorSpecsAreOperandsAsInTheBench) {
  const std::string out = scratch_path("poisson3d7.sq.mtx");
  auto r = cli({"multiply", "poisson3d7:6", "-o", out});
  EXPECT_EXIT_CODE(r, 0);
  const matrix a = spgemm::generate("poisson3d7:6");
  const matrix c = spgemm::read_matrix_market(out);
  const matrix ref = spgemm::cpu_multiply(a, a, 2);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  EXPECT_LE(spgemm::scaled_max_error(c, ref, a, a), 1e-14);

  // Uploaded under the spec's name.
  auto up = cli({"upload", "rmat:8:4"});
  EXPECT_EXIT_CODE(up, 0);
  const std::string h = lines(up.out).at(0);
  auto ls = cli({"ls"});
  EXPECT_TRUE(contains(ls.out, "rmat:8:4")) << ls.out;
  EXPECT_EXIT_CODE(cli({"rm", h}), 0);
}

TEST(CliOperands, TransposeStatsHaveNoGflops) {
  const std::string out = scratch_path("poisson2d5.t.mtx");
  auto r = cli({"transpose", "poisson2d5:5", "-o", out, "--stats"});
  EXPECT_EXIT_CODE(r, 0);
  EXPECT_TRUE(contains(r.err, "nnz")) << r.err;
  EXPECT_FALSE(contains(r.err, "GFLOPS")) << r.err;
}

TEST_F(CliShared, StatusShowsTheServer) {
  auto r = cli({"status"});
  EXPECT_EXIT_CODE(r, 0);
  EXPECT_TRUE(contains(r.out, "server")) << r.out;
  EXPECT_TRUE(contains(r.out, "device")) << r.out;
  EXPECT_TRUE(contains(r.out, "jobs")) << r.out;
  // --server wins over SPGEMM_SERVER.
  r = run_cli({"--server", test_server::address(), "status"}, "127.0.0.1:" + std::to_string(closed_port()));
  EXPECT_EXIT_CODE(r, 0);
}

TEST(CliErrors, BadInputExitsTwoWithAMessage) {
  const std::string server = test_server::address();
  auto r = run_cli({"multiply", scratch_path("missing.mtx"), "-o", scratch_path("x.mtx")}, server);
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_EQ(r.err, "spgemm: " + scratch_path("missing.mtx") + ": cannot open (No such file or directory)\n");

  const std::string bad = scratch_path("malformed.mtx");
  write_text(bad, "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 two 1.0\n");
  r = run_cli({"upload", bad}, server);
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_TRUE(contains(r.err, "malformed.mtx:4: ")) << r.err;
  EXPECT_FALSE(contains(r.err, "INVALID_ARGUMENT")) << "a local file's error is not the server's: " << r.err;

  const std::string dup = scratch_path("dup.mtx");
  write_text(dup, "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n1 2 1.0\n");
  r = run_cli({"multiply", dup, "-o", scratch_path("x.mtx")}, server);
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_TRUE(contains(r.err, "entry (1, 2) appears more than once")) << r.err;

  r = run_cli({"multiply", "poisson3d7:0", "-o", scratch_path("x.mtx")}, server);
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_TRUE(contains(r.err, "generator spec 'poisson3d7:0'")) << r.err;

  // An output file that cannot be written: no status name either.
  r = run_cli({"multiply", "poisson2d5:3", "-o", scratch_path("no-such-dir/x.mtx")}, server);
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_TRUE(contains(r.err, "cannot write")) << r.err;
  EXPECT_FALSE(contains(r.err, "INTERNAL")) << r.err;

  // Bad input is reported before any connection is tried.
  r = run_cli({"multiply", bad, "-o", scratch_path("x.mtx")}, "127.0.0.1:" + std::to_string(closed_port()));
  EXPECT_EXIT_CODE(r, 2);

  // Usage errors.
  r = run_cli({}, server);
  EXPECT_EXIT_CODE(r, 2);
  r = run_cli({"multiply", bad}, server);  // no -o and no --keep
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_TRUE(contains(r.err, "--output")) << r.err;
  r = run_cli({"frobnicate"}, server);
  EXPECT_EXIT_CODE(r, 2);
}

// The CLI reports a bad input file or spec in the engine's words, as
// spgemm-bench does; the bench itself is run where it is built beside the CLI
// (SPGEMM_BENCH, else the build's; the GPU host's service package has none).
TEST(CliErrors, TheBenchReportsBadInputFilesInTheSameWordsAndExitCode) {
  const char* env = std::getenv("SPGEMM_BENCH");
  const std::string bench_binary = env && *env ? env : SPGEMM_BENCH_PATH;
  const bool have_bench = ::access(bench_binary.c_str(), X_OK) == 0;
  const std::string bad = scratch_path("bench-malformed.mtx");
  write_text(bad, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1.0\n");
  for (const std::string& input : {scratch_path("bench-missing.mtx"), bad, std::string("poisson2d5:x")}) {
    SCOPED_TRACE(input);
    const auto ours = run_cli({"upload", input}, "127.0.0.1:" + std::to_string(closed_port()));
    EXPECT_EXIT_CODE(ours, 2);
    std::string engine_words;
    try {
      spgemm::load_matrix(input);
    } catch (const spgemm::error& e) {
      engine_words = e.what();
    }
    EXPECT_EQ(ours.err, "spgemm: " + engine_words + "\n");
    if (!have_bench) continue;
    const std::string bench_err = scratch_path("bench.err");
    const int status = std::system((bench_binary + " --repeats 1 --warmups 0 '" + input + "' >/dev/null 2>" +
                                    bench_err).c_str());
    std::ifstream in(bench_err);
    const std::string bench((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2) << bench;
    EXPECT_EQ(bench, "spgemm-bench: " + engine_words + "\n");
  }
}

TEST(CliErrors, ServerRejectionsExitTwo) {
  const std::string server = test_server::address();
  auto r = run_cli({"download", "m-does-not-exist", "-o", scratch_path("x.mtx")}, server);
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_TRUE(contains(r.err, "NOT_FOUND")) << r.err;

  const std::string a = scratch_path("rect.mtx");
  write_text(a, "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.0\n2 3 2.0\n");
  r = run_cli({"multiply", a, "-o", scratch_path("x.mtx")}, server);  // 2x3 * 2x3
  EXPECT_EXIT_CODE(r, 2);
  EXPECT_TRUE(contains(r.err, "INVALID_ARGUMENT")) << r.err;

  r = run_cli({"multiply", a, scratch_path("rect.mtx"), "--algorithm", "no-such-method", "-o",
               scratch_path("x.mtx")},
              server);
  EXPECT_EXIT_CODE(r, 2);
}

TEST(CliErrors, ServerDownExitsFour) {
  const std::string down = "127.0.0.1:" + std::to_string(closed_port());
  for (const auto& args : std::vector<std::vector<std::string>>{{"ls"}, {"status"}, {"rm", "m-x"}}) {
    auto r = run_cli(args, down);
    EXPECT_EXIT_CODE(r, 4);
    EXPECT_TRUE(contains(r.err, "cannot connect to server at " + down)) << r.err;
    // And how to start one.
    EXPECT_TRUE(contains(r.err, "start a server on this host with `spgemmd`")) << r.err;
  }
  const std::string ok = scratch_path("ok.mtx");
  write_text(ok, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n");
  auto r = run_cli({"multiply", ok, "-o", scratch_path("x.mtx")}, down);
  EXPECT_EXIT_CODE(r, 4);
  r = run_cli({"--server", down, "upload", ok}, "");
  EXPECT_EXIT_CODE(r, 4);
}

TEST(CliHelp, EverySubcommandHasHelpAndExitCodesAreDocumented) {
  auto r = run_cli({"--help"}, "");
  EXPECT_EXIT_CODE(r, 0);
  EXPECT_TRUE(contains(r.out, "Exit codes")) << r.out;
  EXPECT_TRUE(contains(r.out, "SPGEMM_SERVER")) << r.out;
  EXPECT_TRUE(contains(r.out, "Usage: spgemm ")) << "no build path in the usage line: " << r.out;
  for (const char* sub : {"multiply", "galerkin", "transpose"}) {
    r = run_cli({sub, "--help"}, "");
    EXPECT_TRUE(contains(r.out, "required unless --keep")) << r.out;
  }
  r = run_cli({"download", "--help"}, "");
  EXPECT_TRUE(contains(r.out, "-o,--output TEXT REQUIRED")) << r.out;
  for (const char* sub : {"multiply", "galerkin", "transpose", "upload", "download", "ls", "rm", "status"}) {
    r = run_cli({sub, "--help"}, "");
    EXPECT_EXIT_CODE(r, 0);
    EXPECT_TRUE(contains(r.out, sub)) << r.out;
  }
}

}  // namespace
}  // namespace spgemm::client_test
