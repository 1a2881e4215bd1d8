// The client library against a real spgemmd: uploads from arrays, RAII
// handles, streamed and kept results, errors.
#include <gtest/gtest.h>

#include "spgemm/client/client.hpp"
#include "spgemm/reference.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

namespace sc = spgemm::client;
namespace v1 = spgemm::v1;

sc::Client connect() {
  sc::connection_options o;
  o.address = test_server::address();
  o.deadline = std::chrono::seconds(60);
  return sc::Client(o);
}

// A small rectangular matrix with an empty row.
sc::csr_matrix small(std::int64_t rows, std::int64_t cols, int seed) {
  sc::csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (r % 5 != 3) {
      for (std::int64_t c = (r * 7 + seed) % 3; c < cols; c += 2 + (r + seed) % 3) {
        m.col_indices.push_back(static_cast<std::int32_t>(c));
        m.values.push_back(0.5 + static_cast<double>((r * 31 + c * 17 + seed) % 11));
      }
    }
    m.row_offsets.push_back(static_cast<std::int64_t>(m.col_indices.size()));
  }
  return m;
}

spgemm::csr_matrix<double> to_engine(const sc::csr_matrix& m) {
  spgemm::csr_matrix<double> e;
  e.rows = m.rows;
  e.cols = m.cols;
  e.row_offsets = m.row_offsets;
  e.col_indices = m.col_indices;
  e.values = m.values;
  return e;
}

grpc::StatusCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sc::Error& e) {
    EXPECT_FALSE(e.message().empty());
    return e.code();
  }
  return grpc::StatusCode::OK;
}

TEST(ClientLibrary, MultiplyStreamedAndKeptMatchTheReference) {
  const std::string& address = test_server::address();
  ASSERT_FALSE(address.empty());
  auto client = connect();
  const auto a = small(40, 30, 1);
  const auto b = small(30, 25, 2);
  const auto ref = spgemm::cpu_multiply(to_engine(a), to_engine(b), 1);

  auto ra = client.upload(a);
  std::int64_t last_rows = -1, total = 0;
  sc::upload_options uo;
  uo.name = "b-matrix";
  uo.chunk_bytes = 256;  // many chunks
  uo.on_progress = [&](const sc::progress& p) {
    last_rows = p.rows;
    total = p.total_rows;
  };
  auto rb = client.upload(b, uo);
  EXPECT_EQ(last_rows, 30);
  EXPECT_EQ(total, 30);
  EXPECT_EQ(rb.info().rows(), 30);
  EXPECT_EQ(rb.info().nnz(), b.nnz());
  EXPECT_EQ(client.describe(rb.handle()).name(), "b-matrix");

  sc::product_options po;
  bool done = false;
  po.chunk_bytes = 128;
  po.on_progress = [&](const sc::progress& p) { done = done || (p.done && p.rows == 40); };
  auto r = client.multiply(ra.handle(), rb.handle(), po);
  EXPECT_TRUE(done);
  EXPECT_EQ(r.matrix.rows, 40);
  EXPECT_EQ(r.matrix.cols, 25);
  EXPECT_EQ(r.matrix.row_offsets, ref.row_offsets);
  EXPECT_EQ(r.matrix.col_indices, ref.col_indices);
  EXPECT_LE(spgemm::scaled_max_error(to_engine(r.matrix), ref, to_engine(a), to_engine(b)), 1e-14);
  EXPECT_EQ(r.stats.nnz(), ref.nnz());

  auto k = client.multiply_kept(ra.handle(), rb.handle());
  EXPECT_EQ(k.matrix.info().nnz(), ref.nnz());
  auto d = client.download(k.matrix.handle());
  EXPECT_EQ(d.matrix.col_indices, ref.col_indices);

  auto t = client.transpose(ra.handle());
  const auto tref = spgemm::cpu_transpose(to_engine(a));
  EXPECT_EQ(t.matrix.row_offsets, tref.row_offsets);
  EXPECT_EQ(t.matrix.col_indices, tref.col_indices);
  EXPECT_EQ(t.matrix.values, tref.values);
}

TEST(ClientLibrary, FloatArraysUploadAsFloat32) {
  auto client = connect();
  std::vector<std::int64_t> offsets = {0, 1, 3};
  std::vector<std::int32_t> cols = {1, 0, 1};
  std::vector<float> vals = {1.5f, 2.0f, -0.25f};
  auto m = client.upload(sc::matrix_ref::of(2, 2, offsets.data(), cols.data(), vals.data()));
  EXPECT_EQ(m.info().value_type(), v1::FLOAT32);
  auto d = client.download(m.handle());
  EXPECT_EQ(d.value_type, v1::FLOAT32);
  EXPECT_EQ(d.matrix.values, (std::vector<double>{1.5, 2.0, -0.25}));
}

TEST(ClientLibrary, RemoteMatrixDeletesItselfUnlessReleased) {
  auto client = connect();
  const auto a = small(10, 10, 3);
  std::string dropped, kept;
  {
    auto m = client.upload(a);
    dropped = m.handle();
    auto moved = std::move(m);  // moving does not delete
    EXPECT_FALSE(m);
    EXPECT_EQ(client.describe(dropped).handle(), dropped);
  }
  EXPECT_EQ(code_of([&] { client.describe(dropped); }), grpc::StatusCode::NOT_FOUND);
  {
    auto m = client.upload(a);
    kept = m.release();
  }
  EXPECT_EQ(client.describe(kept).rows(), 10);
  bool listed = false;
  for (const auto& info : client.list()) listed = listed || info.handle() == kept;
  EXPECT_TRUE(listed);
  EXPECT_GT(client.remove(kept), 0);
  EXPECT_EQ(code_of([&] { client.remove(kept); }), grpc::StatusCode::NOT_FOUND);
}

TEST(ClientLibrary, ErrorsCarryTheStatusCode) {
  auto client = connect();
  EXPECT_EQ(code_of([&] { client.download("m-does-not-exist"); }), grpc::StatusCode::NOT_FOUND);
  auto a = client.upload(small(10, 7, 1));
  EXPECT_EQ(code_of([&] { client.multiply(a.handle(), a.handle()); }), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_GE(client.status().devices_size(), 1);

  sc::connection_options o;
  o.address = "127.0.0.1:" + std::to_string(closed_port());
  o.deadline = std::chrono::seconds(5);
  sc::Client down(o);
  EXPECT_EQ(code_of([&] { down.list(); }), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(down.connected());
}

}  // namespace
}  // namespace spgemm::client_test
