// The C++ client's Graph calls against a real spgemmd: triangles of a graph
// by a masked plus_pair product of its strictly lower triangle, a step of
// each kind against the engine's reference, transposed operands, and names
// the server does not know.
#include <gtest/gtest.h>

#include <iomanip>

#include "spgemm/client/graph.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/reference.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

namespace sc = spgemm::client;

sc::Client connect() {
  sc::connection_options o;
  o.address = test_server::address();
  o.deadline = std::chrono::seconds(60);
  return sc::Client(o);
}

sc::csr_matrix to_client(const spgemm::csr_matrix<double>& m) {
  sc::csr_matrix c;
  c.rows = m.rows;
  c.cols = m.cols;
  c.row_offsets = m.row_offsets;
  c.col_indices = m.col_indices;
  c.values = m.values;
  return c;
}

spgemm::csr_matrix<double> fetched(sc::Client& c, const sc::kept_result& k) {
  const sc::local_result r = c.download(k.matrix.handle());
  spgemm::csr_matrix<double> m;
  m.rows = r.matrix.rows;
  m.cols = r.matrix.cols;
  m.row_offsets = r.matrix.row_offsets;
  m.col_indices = r.matrix.col_indices;
  m.values = r.matrix.values;
  return m;
}

void expect_equal(const spgemm::csr_matrix<double>& got, const spgemm::csr_matrix<double>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.row_offsets, want.row_offsets);
  EXPECT_EQ(got.col_indices, want.col_indices);
  ASSERT_EQ(got.values.size(), want.values.size());
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    if (got.values[i] != want.values[i]) {
      ADD_FAILURE() << "entry " << i << " of " << got.values.size() << ": " << std::setprecision(17) << got.values[i]
                    << " against " << want.values[i];
      break;
    }
  }
}

spgemm::csr_matrix<double> reference(const spgemm::matrix_op& op, const spgemm::csr_matrix<double>& a) {
  const spgemm::any_csr x = a;
  return std::get<spgemm::csr_matrix<double>>(spgemm::cpu_run_op(op, {&x}));
}

TEST(GraphClient, CountsTrianglesWithAMaskedProduct) {
  sc::Client c = connect();
  sc::Graph g(c);
  const auto graph = spgemm::generate("rmat:10:8");
  const sc::RemoteMatrix a = c.upload(to_client(graph));
  const sc::kept_result l = g.select(a, "tril", -1);
  sc::mxm_options o;
  o.semiring = "plus_pair";
  o.within = sc::mask{l.matrix};
  const sc::kept_result t = g.mxm(l.matrix, l.matrix, o);
  const auto total = fetched(c, g.reduce_scalar(t.matrix));
  const auto lower = reference(spgemm::select_entries{spgemm::selector::tril, -1}, graph);
  const auto want = spgemm::cpu_masked_multiply(lower, lower, lower, {}, spgemm::parse_semiring("plus_pair"));
  double triangles = 0;
  for (const double v : want.values) triangles += v;
  ASSERT_EQ(total.nnz(), 1);
  EXPECT_EQ(total.values[0], triangles);
  EXPECT_GT(triangles, 0);
}

TEST(GraphClient, StepsMatchTheEngineAndTakeTransposedOperands) {
  sc::Client c = connect();
  sc::Graph g(c);
  const auto m = spgemm::generate("er:120:6:3");
  const sc::RemoteMatrix a = c.upload(to_client(m));
  {
    SCOPED_TRACE("pow");
    expect_equal(fetched(c, g.apply(a, "pow", 2.0)), reference(spgemm::apply_scalar{spgemm::binary_op::pow, 2, false}, m));
  }
  {
    SCOPED_TRACE("top_k");
    expect_equal(fetched(c, g.top_k(a, 2, true)), reference(spgemm::top_k{2, true}, m));
  }
  {
    SCOPED_TRACE("reduce_rowwise of A^T");
    expect_equal(fetched(c, g.reduce_rowwise(sc::transposed(a.handle()), "max")),
                 reference(spgemm::reduce{spgemm::reduce_axis::rows, spgemm::monoid::max, false}, spgemm::cpu_transpose(m)));
  }
  const sc::kept_result sums = g.reduce_columnwise(a);
  const sc::kept_result normalized = g.scale_columns(a, sums.matrix, "div");
  const auto col = reference(spgemm::reduce{spgemm::reduce_axis::columns}, m);
  const spgemm::any_csr x = m, v = col;
  {
    SCOPED_TRACE("scale_columns");
    expect_equal(fetched(c, normalized),
                 std::get<spgemm::csr_matrix<double>>(spgemm::cpu_run_op(spgemm::scale{true, spgemm::binary_op::div}, {&x, &v})));
  }
  const auto plus = fetched(c, g.ewise_add(a, sc::transposed(a.handle())));
  const spgemm::any_csr t = spgemm::cpu_transpose(m);
  {
    SCOPED_TRACE("ewise_add with A^T");
    expect_equal(plus, std::get<spgemm::csr_matrix<double>>(spgemm::cpu_run_op(spgemm::ewise_add{}, {&x, &t})));
  }
  {
    SCOPED_TRACE("extract_rows");
    expect_equal(fetched(c, g.extract_rows(a, {7, 0, 7})), reference(spgemm::extract_rows{{7, 0, 7}}, m));
  }
}

TEST(GraphClient, UnknownNamesAreInvalidArguments) {
  sc::Client c = connect();
  sc::Graph g(c);
  const sc::RemoteMatrix a = c.upload(to_client(spgemm::generate("er:30:3:1")));
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { g.select(a, "lower"); }, [&] { g.apply(a, "square"); },
           [&] { g.mxm(a, a, {"min_foo", std::nullopt, {}}); }, [&] { g.reduce_scalar(a, "sum"); }}) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const sc::Error& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT) << e.what();
      EXPECT_NE(std::string(e.what()).find("known"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace spgemm::client_test
