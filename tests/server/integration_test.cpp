// Integration tests of spgemmd: the real binary (CPU backend) started as a
// child process on a loopback port, driven through the generated stub.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "health.grpc.pb.h"
#include "http_scrape.hpp"
#include "reflection.grpc.pb.h"
#include "spgemm/csr.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"
#include "spgemmd_server.hpp"
#include "wire/chunk_codec.hpp"

namespace v1 = spgemm::v1;
namespace fs = std::filesystem;
using csr = spgemm::csr_matrix<double>;
using namespace std::chrono_literals;

namespace {

// ---- the server process ------------------------------------------------------

using spgemmd::testing::spgemmd_options;
using spgemmd::testing::spgemmd_server;
using spgemmd::testing::test_backend;

// The servers whose metrics the tests read.
const spgemmd_options with_metrics{/*metrics=*/true, /*address_space_bytes=*/0};

// The name of the server's first device: "cpu" on the CPU backend, else the first GPU.
std::string first_device() { return test_backend() == "cpu" ? "cpu" : "cuda:0"; }

// A Prometheus series of the first device, e.g. spgemmd_cache_bytes{device="cpu"}.
std::string device_series(const std::string& name) { return name + "{device=\"" + first_device() + "\"}"; }

// ---- wire helpers ------------------------------------------------------------

spgemm::wire::csr_view view_of(const csr& m) {
  return {m.rows, m.cols, m.nnz(), m.row_offsets.data(), m.col_indices.data(), m.values.data(), v1::FLOAT64};
}

grpc::Status upload(v1::Spgemm::Stub& stub, const csr& m, v1::MatrixInfo* info, const std::string& name = "",
                    int64_t ttl = 0, std::size_t chunk_bytes = 256 << 10) {
  grpc::ClientContext ctx;
  auto writer = stub.Upload(&ctx, info);
  v1::UploadPart part;
  *part.mutable_header() = spgemm::wire::header_of(view_of(m), name);
  part.mutable_header()->set_ttl_seconds(ttl);
  writer->Write(part);
  for (auto [b, e] : spgemm::wire::plan_row_blocks(view_of(m), chunk_bytes)) {
    part.Clear();
    spgemm::wire::fill_chunk(view_of(m), b, e, part.mutable_chunk());
    if (!writer->Write(part)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

std::string upload_ok(v1::Spgemm::Stub& stub, const csr& m, const std::string& name = "") {
  v1::MatrixInfo info;
  grpc::Status s = upload(stub, m, &info, name);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return info.handle();
}

// Uploads raw parts (for the bad-input cases).
grpc::Status upload_parts(v1::Spgemm::Stub& stub, const std::vector<v1::UploadPart>& parts) {
  grpc::ClientContext ctx;
  v1::MatrixInfo info;
  auto writer = stub.Upload(&ctx, &info);
  for (const auto& p : parts) {
    if (!writer->Write(p)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

struct result {
  grpc::Status status;
  csr matrix;
  v1::MatrixInfo kept;
  v1::JobStats stats;
  bool has_stats = false;
};

result read_result(grpc::ClientReader<v1::ResultPart>& reader) {
  result r;
  std::optional<spgemm::wire::chunk_assembler> a;
  v1::ResultPart part;
  while (reader.Read(&part)) {
    if (part.has_header()) {
      EXPECT_FALSE(a.has_value()) << "two headers";
      a.emplace(part.header());
    } else if (part.has_chunk()) {
      EXPECT_TRUE(a.has_value()) << "chunk before header";
      auto s = a->add(part.chunk());
      EXPECT_TRUE(s.ok()) << s.error_message();
    } else if (part.has_kept()) {
      r.kept = part.kept();
    } else if (part.has_stats()) {
      r.stats = part.stats();
      r.has_stats = true;
    }
  }
  r.status = reader.Finish();
  if (a && r.status.ok()) {
    auto s = a->finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(a->header().value_type(), v1::FLOAT64);
    r.matrix.rows = a->header().rows();
    r.matrix.cols = a->header().cols();
    r.matrix.row_offsets = a->row_offsets();
    r.matrix.col_indices = a->col_indices();
    r.matrix.values = a->values_f64();
  }
  return r;
}

result multiply(v1::Spgemm::Stub& stub, const std::string& a, const std::string& b, bool keep = false,
                const std::string& algorithm = "", std::chrono::milliseconds deadline = 0ms) {
  grpc::ClientContext ctx;
  if (deadline > 0ms) ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::MultiplyRequest req;
  req.set_a(a);
  req.set_b(b);
  req.mutable_options()->set_algorithm(algorithm);
  req.mutable_output()->set_keep(keep);
  auto reader = stub.Multiply(&ctx, req);
  return read_result(*reader);
}

result galerkin(v1::Spgemm::Stub& stub, const std::string& p, const std::string& a, v1::GalerkinForm form) {
  grpc::ClientContext ctx;
  v1::GalerkinRequest req;
  req.set_p(p);
  req.set_a(a);
  req.set_form(form);
  auto reader = stub.Galerkin(&ctx, req);
  return read_result(*reader);
}

result transpose(v1::Spgemm::Stub& stub, const std::string& a) {
  grpc::ClientContext ctx;
  v1::TransposeRequest req;
  req.set_a(a);
  auto reader = stub.Transpose(&ctx, req);
  return read_result(*reader);
}

result download(v1::Spgemm::Stub& stub, const std::string& handle) {
  grpc::ClientContext ctx;
  v1::DownloadRequest req;
  req.set_handle(handle);
  auto reader = stub.Download(&ctx, req);
  return read_result(*reader);
}

// Describe: its status; the matrix's info in `out`.
grpc::Status describe(v1::Spgemm::Stub& stub, const std::string& handle, v1::MatrixInfo* out) {
  grpc::ClientContext ctx;
  v1::DescribeRequest req;
  req.set_handle(handle);
  return stub.Describe(&ctx, req, out);
}

grpc::Status erase(v1::Spgemm::Stub& stub, const std::string& handle) {
  grpc::ClientContext ctx;
  v1::DeleteRequest req;
  req.set_handle(handle);
  v1::DeleteResponse resp;
  return stub.Delete(&ctx, req, &resp);
}

v1::ServerStatus server_status(v1::Spgemm::Stub& stub) {
  grpc::ClientContext ctx;
  v1::ServerStatus s;
  v1::StatusRequest req;
  EXPECT_TRUE(stub.Status(&ctx, req, &s).ok());
  return s;
}

// The status once no job is queued, running or holding device memory (or
// after ten seconds). A cancelled job can still be queued, in its admission
// (reserving memory) or ending (freeing it): all three must be over.
v1::ServerStatus settled_status(v1::Spgemm::Stub& stub) {
  v1::ServerStatus s;
  for (int i = 0; i < 200; ++i) {
    s = server_status(stub);
    if (s.devices(0).reserved_bytes() == 0 && s.jobs_running() == 0 && s.queue_depth() == 0) break;
    std::this_thread::sleep_for(50ms);
  }
  return s;
}

using spgemmd::testing::http_get;
using spgemmd::testing::metric;

void expect_equal(const csr& got, const csr& ref, const csr& a, const csr& b, const std::string& what) {
  ASSERT_EQ(got.rows, ref.rows) << what;
  ASSERT_EQ(got.cols, ref.cols) << what;
  ASSERT_EQ(got.row_offsets, ref.row_offsets) << what;
  ASSERT_EQ(got.col_indices, ref.col_indices) << what;
  EXPECT_LE(spgemm::scaled_max_error(got, ref, a, b), 1e-12) << what;
}

void expect_same(const csr& got, const csr& ref, const std::string& what) {
  ASSERT_EQ(got.rows, ref.rows) << what;
  ASSERT_EQ(got.cols, ref.cols) << what;
  ASSERT_EQ(got.row_offsets, ref.row_offsets) << what;
  ASSERT_EQ(got.col_indices, ref.col_indices) << what;
  ASSERT_EQ(got.values, ref.values) << what;
}

// The leading k x k block of a square matrix.
csr leading_block(const csr& m, int64_t k) {
  csr out;
  out.rows = out.cols = k;
  out.row_offsets = {0};
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t p = m.row_offsets[r]; p < m.row_offsets[r + 1]; ++p) {
      if (m.col_indices[p] < k) {
        out.col_indices.push_back(m.col_indices[p]);
        out.values.push_back(m.values[p]);
      }
    }
    out.row_offsets.push_back(out.nnz());
  }
  return out;
}

// ---- the shared server ---------------------------------------------------------

class service_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new spgemmd_server({}, with_metrics); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(server_ && server_->ok()) << (server_ ? server_->failure() : ""); }
  v1::Spgemm::Stub& stub() { return server_->stub(); }
  static spgemmd_server* server_;
};
spgemmd_server* service_test::server_ = nullptr;

}  // namespace

TEST_F(service_test, shared_matrices_round_trip) {
  const char* env = std::getenv("SPGEMM_MATRICES");
  const fs::path dir = env != nullptr ? env : SPGEMM_MATRICES_DEFAULT;
  const char* require = std::getenv("SPGEMM_REQUIRE_MATRICES");
  if (!fs::is_directory(dir)) {
    if (require != nullptr && std::string(require) == "1") FAIL() << "matrix directory " << dir << " is absent";
    GTEST_SKIP() << "matrix directory " << dir << " is absent (set SPGEMM_MATRICES)";
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 4 && (n.find(".mtx") != std::string::npos)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no .mtx files in " << dir;
  int checked = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    csr a = spgemm::read_matrix_market(path.string());
    // Keep the suite quick on two cores: shrink to a leading block while A*A is large.
    if (a.rows == a.cols) {
      while (spgemm::compute_product_stats(a, a).products > 4'000'000 && a.rows > 64) a = leading_block(a, a.rows / 2);
    }
    const std::string h = upload_ok(stub(), a, path.filename().string());
    ASSERT_FALSE(h.empty());
    result d = download(stub(), h);
    ASSERT_TRUE(d.status.ok()) << d.status.error_message();
    expect_same(d.matrix, a, "download");
    if (a.rows == a.cols) {
      result c = multiply(stub(), h, h);
      ASSERT_TRUE(c.status.ok()) << c.status.error_message();
      ASSERT_TRUE(c.has_stats);
      EXPECT_EQ(c.stats.nnz(), c.matrix.nnz());
      expect_equal(c.matrix, spgemm::cpu_multiply(a, a), a, a, "A*A");
    }
    grpc::ClientContext ctx;
    v1::DeleteRequest del;
    del.set_handle(h);
    v1::DeleteResponse resp;
    ASSERT_TRUE(stub().Delete(&ctx, del, &resp).ok());
    // The matrix's bytes and its name's.
    EXPECT_EQ(resp.freed_bytes(), static_cast<int64_t>(spgemm::info_of(a).bytes() + path.filename().string().size()));
    ++checked;
  }
  std::printf("[ INFO     ] %d shared matrices round-tripped (upload, download, A*A)\n", checked);
}

TEST_F(service_test, kept_results_chain) {
  const csr a = spgemm::generate("poisson2d5:40");
  const std::string h = upload_ok(stub(), a);
  result a2 = multiply(stub(), h, h, /*keep=*/true);
  ASSERT_TRUE(a2.status.ok()) << a2.status.error_message();
  ASSERT_FALSE(a2.kept.handle().empty());
  EXPECT_EQ(a2.matrix.nnz(), 0);  // nothing streamed
  ASSERT_TRUE(a2.has_stats);
  result a3 = multiply(stub(), a2.kept.handle(), h, /*keep=*/true);
  ASSERT_TRUE(a3.status.ok()) << a3.status.error_message();
  const csr ref2 = spgemm::cpu_multiply(a, a);
  const csr ref3 = spgemm::cpu_multiply(ref2, a);
  EXPECT_EQ(a3.kept.nnz(), ref3.nnz());
  result d = download(stub(), a3.kept.handle());
  ASSERT_TRUE(d.status.ok());
  expect_equal(d.matrix, ref3, ref2, a, "A*A*A");

  // Describe and List see the kept handles.
  grpc::ClientContext ctx;
  v1::DescribeRequest dr;
  dr.set_handle(a3.kept.handle());
  v1::MatrixInfo info;
  ASSERT_TRUE(stub().Describe(&ctx, dr, &info).ok());
  EXPECT_EQ(info.rows(), a.rows);
  EXPECT_EQ(info.residency(), v1::DEVICE);
  EXPECT_EQ(info.device(), first_device());
  grpc::ClientContext lctx;
  v1::ListResponse list;
  ASSERT_TRUE(stub().List(&lctx, v1::ListRequest(), &list).ok());
  int found = 0;
  for (const auto& m : list.matrices()) found += m.handle() == a2.kept.handle() || m.handle() == a3.kept.handle();
  EXPECT_EQ(found, 2);
}

TEST_F(service_test, transpose_and_galerkin) {
  const csr a = spgemm::generate("poisson2d5:20");  // 400 x 400
  // A prolongator 400 x 100: aggregate 4 consecutive points.
  csr p;
  p.rows = 400;
  p.cols = 100;
  for (int64_t r = 0; r < 400; ++r) {
    p.col_indices.push_back(static_cast<int32_t>(r / 4));
    p.values.push_back(1.0 + static_cast<double>(r % 3));
    p.row_offsets.push_back(p.nnz());
  }
  const std::string ha = upload_ok(stub(), a), hp = upload_ok(stub(), p);
  {
    result t = transpose(stub(), hp);
    ASSERT_TRUE(t.status.ok()) << t.status.error_message();
    expect_same(t.matrix, spgemm::cpu_transpose(p), "P^T");
  }
  const csr pt = spgemm::cpu_transpose(p);
  const csr ref = spgemm::cpu_multiply(pt, spgemm::cpu_multiply(a, p));
  {
    result g = galerkin(stub(), hp, ha, v1::PT_A_P);
    ASSERT_TRUE(g.status.ok()) << g.status.error_message();
    ASSERT_EQ(g.matrix.rows, 100);
    ASSERT_EQ(g.matrix.row_offsets, ref.row_offsets);
    ASSERT_EQ(g.matrix.col_indices, ref.col_indices);
    for (std::size_t i = 0; i < ref.values.size(); ++i) EXPECT_NEAR(g.matrix.values[i], ref.values[i], 1e-9);
  }
  {  // P A P^T with the restriction R = P^T
    const std::string hr = upload_ok(stub(), pt);
    result g = galerkin(stub(), hr, ha, v1::P_A_PT);
    ASSERT_TRUE(g.status.ok()) << g.status.error_message();
    ASSERT_EQ(g.matrix.col_indices, ref.col_indices);
  }
  // wrong shapes
  EXPECT_EQ(galerkin(stub(), hp, ha, v1::P_A_PT).status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(service_test, concurrent_clients) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto stub = v1::Spgemm::NewStub(server_->channel());
      const csr a = spgemm::generate("rmat:9:8:" + std::to_string(t + 1));
      const csr ref = spgemm::cpu_multiply(a, a);
      const std::string h = upload_ok(*stub, a);
      for (int i = 0; i < 3; ++i) {
        result c = multiply(*stub, h, h);
        if (c.status.ok() && c.matrix.col_indices == ref.col_indices && c.matrix.row_offsets == ref.row_offsets) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 18);
}

TEST_F(service_test, concurrent_repeated_kept_products) {
  // Products that queue behind each other go to the workers: a repeated one
  // is announced while it runs, however soon it ends.
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  constexpr int clients = 6, rounds = 20;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      auto stub = v1::Spgemm::NewStub(server_->channel());
      const csr a = spgemm::generate("rmat:8:8:" + std::to_string(t + 1));
      const int64_t nnz = spgemm::cpu_multiply(a, a).nnz();
      const std::string h = upload_ok(*stub, a);
      for (int i = 0; i < rounds; ++i) {
        result c = multiply(*stub, h, h, /*keep=*/true);
        v1::MatrixInfo info;
        const bool described = c.status.ok() && describe(*stub, c.kept.handle(), &info).ok();
        if (described && c.kept.nnz() == nnz && info.nnz() == nnz && c.stats.nnz() == nnz) ++ok;
        (void)erase(*stub, c.kept.handle());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), clients * rounds);
}

TEST_F(service_test, bad_input_gets_its_status) {
  const csr a = spgemm::generate("poisson2d5:10");  // 100 x 100
  const std::string h = upload_ok(stub(), a);
  const std::string unknown = "m-0123456789abcdef0123456789abcdef";
  {
    result r = multiply(stub(), h, unknown);
    EXPECT_EQ(r.status.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_NE(r.status.error_message().find(unknown), std::string::npos);
  }
  EXPECT_EQ(multiply(stub(), "", h).status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(download(stub(), unknown).status.error_code(), grpc::StatusCode::NOT_FOUND);
  {
    grpc::ClientContext ctx;
    v1::DeleteRequest req;
    req.set_handle(unknown);
    v1::DeleteResponse resp;
    EXPECT_EQ(stub().Delete(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    v1::DescribeRequest req;
    req.set_handle(unknown);
    v1::MatrixInfo resp;
    EXPECT_EQ(stub().Describe(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {  // mismatched shapes name both
    csr r = spgemm::generate("poisson2d5:5");  // 25 x 25
    const std::string hr = upload_ok(stub(), r);
    result m = multiply(stub(), h, hr);
    EXPECT_EQ(m.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(m.status.error_message().find("100 x 100"), std::string::npos) << m.status.error_message();
    EXPECT_NE(m.status.error_message().find("25 x 25"), std::string::npos) << m.status.error_message();
  }
  {  // unknown algorithm lists the known ones
    result m = multiply(stub(), h, h, false, "no-such-method");
    EXPECT_EQ(m.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(m.status.error_message().find("gustavson"), std::string::npos) << m.status.error_message();
  }
  // Uploads.
  v1::UploadPart header;
  *header.mutable_header() = spgemm::wire::header_of(view_of(a));
  std::vector<v1::UploadPart> chunks;
  for (auto [b, e] : spgemm::wire::plan_row_blocks(view_of(a), 512)) {
    chunks.emplace_back();
    spgemm::wire::fill_chunk(view_of(a), b, e, chunks.back().mutable_chunk());
  }
  ASSERT_GE(chunks.size(), 3u);
  auto expect_upload = [&](std::vector<v1::UploadPart> parts, grpc::StatusCode code, const std::string& needle) {
    grpc::Status s = upload_parts(stub(), parts);
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    EXPECT_NE(s.error_message().find(needle), std::string::npos) << s.error_message();
  };
  {
    auto bad = header;
    bad.mutable_header()->set_rows(-5);
    expect_upload({bad}, grpc::StatusCode::INVALID_ARGUMENT, "negative");
    bad = header;
    bad.mutable_header()->set_index_type(v1::INT64);
    expect_upload({bad}, grpc::StatusCode::INVALID_ARGUMENT, "INT64");
    bad = header;
    bad.mutable_header()->set_value_type(v1::VALUE_TYPE_UNSPECIFIED);
    expect_upload({bad}, grpc::StatusCode::INVALID_ARGUMENT, "value_type");
    bad = header;
    bad.mutable_header()->set_nnz(int64_t{1} << 40);
    bad.mutable_header()->set_rows(int64_t{1} << 30);
    bad.mutable_header()->set_cols(int64_t{1} << 30);
    expect_upload({bad}, grpc::StatusCode::RESOURCE_EXHAUSTED, "budget");
  }
  expect_upload({chunks[0]}, grpc::StatusCode::INVALID_ARGUMENT, "MatrixHeader");
  expect_upload({header, chunks[1]}, grpc::StatusCode::INVALID_ARGUMENT, "out of order");
  expect_upload({header, chunks[0], chunks[1]}, grpc::StatusCode::INVALID_ARGUMENT, "missing");
  expect_upload({header, header}, grpc::StatusCode::INVALID_ARGUMENT, "MatrixHeader");
  {  // malformed CSR: unsorted columns in row 0 -> the chunk check names it
    csr bad = a;
    std::swap(bad.col_indices[0], bad.col_indices[1]);
    v1::MatrixInfo info;
    grpc::Status s = upload(stub(), bad, &info);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("not valid CSR"), std::string::npos) << s.error_message();
  }
  {  // column out of range
    csr bad = a;
    bad.col_indices.back() = 100;
    v1::MatrixInfo info;
    EXPECT_EQ(upload(stub(), bad, &info).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  // The server is still up and the good matrix still works.
  result c = multiply(stub(), h, h);
  EXPECT_TRUE(c.status.ok());
}

TEST_F(service_test, cancellation_and_deadline_free_memory) {
  // A product that runs well past the deadline and the cancel below: about a
  // second on the CPU backend, half a second on an H100.
  const csr big = spgemm::generate(test_backend() == "cpu" ? "poisson3d27:36" : "rmat:18:16");
  const std::string h = upload_ok(stub(), big);
  const int64_t cached = server_status(stub()).devices(0).cached_bytes();
  auto wait_idle = [&] {
    const v1::ServerStatus s = settled_status(stub());
    EXPECT_EQ(s.devices(0).reserved_bytes(), 0);
    EXPECT_EQ(s.jobs_running(), 0);
    EXPECT_EQ(s.queue_depth(), 0);
    EXPECT_EQ(s.devices(0).cached_bytes(), cached);
  };
  {
    result r = multiply(stub(), h, h, false, "", 30ms);
    EXPECT_EQ(r.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << r.status.error_message();
    wait_idle();
  }
  {
    grpc::ClientContext ctx;
    v1::MultiplyRequest req;
    req.set_a(h);
    req.set_b(h);
    auto reader = stub().Multiply(&ctx, req);
    std::thread canceller([&] {
      std::this_thread::sleep_for(50ms);
      ctx.TryCancel();
    });
    result r = read_result(*reader);
    canceller.join();
    EXPECT_EQ(r.status.error_code(), grpc::StatusCode::CANCELLED);
    wait_idle();
  }
  const std::string metrics = http_get(server_->metrics_port(), "/metrics");
  EXPECT_GE(metric(metrics, "spgemmd_jobs_total{kind=\"multiply\",outcome=\"cancelled\"}"), 1);
}

TEST_F(service_test, repeated_slow_kept_product_is_announced) {
  // A kept product that ran before (a tenth of a second on the CPU backend,
  // about 10 ms on an H100) gets its handle while it runs.
  const csr a = spgemm::generate(test_backend() == "cpu" ? "poisson3d27:36" : "elasticity3d:28");
  const std::string h = upload_ok(stub(), a);
  const int64_t cached = server_status(stub()).devices(0).cached_bytes();
  result first = multiply(stub(), h, h, /*keep=*/true);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  result again = multiply(stub(), h, h, /*keep=*/true);
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  ASSERT_TRUE(again.has_stats);
  EXPECT_NE(again.kept.handle(), first.kept.handle());
  EXPECT_EQ(again.kept.nnz(), first.kept.nnz());
  EXPECT_EQ(again.stats.nnz(), first.kept.nnz());
  for (const result* r : {&first, &again}) {
    v1::MatrixInfo info;
    ASSERT_TRUE(describe(stub(), r->kept.handle(), &info).ok());
    EXPECT_EQ(info.nnz(), r->kept.nnz());
    EXPECT_EQ(info.bytes(), r->kept.bytes());
    EXPECT_EQ(info.created().seconds(), r->kept.created().seconds());
    ASSERT_TRUE(erase(stub(), r->kept.handle()).ok());
  }

  // Cancelled once its handle came: the handle never comes to be.
  grpc::ClientContext ctx;
  v1::MultiplyRequest req;
  req.set_a(h);
  req.set_b(h);
  req.mutable_output()->set_keep(true);
  auto reader = stub().Multiply(&ctx, req);
  v1::ResultPart part;
  ASSERT_TRUE(reader->Read(&part));
  ASSERT_TRUE(part.has_kept());  // before the product ended
  ctx.TryCancel();
  while (reader->Read(&part)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  const v1::ServerStatus s = settled_status(stub());
  v1::MatrixInfo info;
  EXPECT_EQ(describe(stub(), part.kept().handle(), &info).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.jobs_running(), 0);
  EXPECT_EQ(s.queue_depth(), 0);
  EXPECT_EQ(s.devices(0).reserved_bytes(), 0);
  EXPECT_EQ(s.devices(0).cached_bytes(), cached);
}

TEST_F(service_test, health_reflection_and_metrics_answer) {
  {
    auto health = grpc::health::v1::Health::NewStub(server_->channel());
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  {
    auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(server_->channel());
    grpc::ClientContext ctx;
    auto stream = reflection->ServerReflectionInfo(&ctx);
    grpc::reflection::v1alpha::ServerReflectionRequest req;
    req.set_list_services("");
    ASSERT_TRUE(stream->Write(req));
    stream->WritesDone();
    grpc::reflection::v1alpha::ServerReflectionResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    bool found = false;
    for (const auto& s : resp.list_services_response().service()) found |= s.name() == "spgemm.v1.Spgemm";
    EXPECT_TRUE(found);
    EXPECT_TRUE(stream->Finish().ok());
  }
  const std::string metrics = http_get(server_->metrics_port(), "/metrics");
  EXPECT_NE(metrics.find("HTTP/1.1 200 OK"), std::string::npos);
  EXPECT_NE(metrics.find("Content-Type: text/plain"), std::string::npos);
  for (const std::string& name :
       {std::string("spgemmd_queue_depth"), device_series("spgemmd_cache_bytes"),
        device_series("spgemmd_cache_hit_ratio"), device_series("spgemmd_device_memory_total_bytes")}) {
    EXPECT_GE(metric(metrics, name), 0) << name;
  }
  const v1::ServerStatus s = server_status(stub());
  EXPECT_FALSE(s.version().empty());
  ASSERT_EQ(s.devices_size(), 1);
  EXPECT_EQ(s.devices(0).name(), first_device());
  EXPECT_GT(s.devices(0).budget_bytes(), 0);
}

TEST_F(service_test, ttl_expires_unused_matrices) {
  const csr a = spgemm::generate("poisson2d5:4");
  v1::MatrixInfo info;
  ASSERT_TRUE(upload(stub(), a, &info, "short-lived", /*ttl=*/1).ok());
  EXPECT_EQ(info.ttl_seconds(), 1);
  std::this_thread::sleep_for(2500ms);
  grpc::ClientContext ctx;
  v1::DescribeRequest req;
  req.set_handle(info.handle());
  v1::MatrixInfo out;
  EXPECT_EQ(stub().Describe(&ctx, req, &out).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A server with a small budget: many jobs at once never take more than it.
TEST(service_budget, scheduler_stays_within_a_small_budget) {
  constexpr int64_t budget = 6 << 20;
  constexpr int64_t host_budget = 40 << 20;
  spgemmd_server server({"--device_budget_bytes=" + std::to_string(budget), "--workers=3", "--max_queue=64",
                         "--host_budget_bytes=" + std::to_string(host_budget)},
                        with_metrics);
  ASSERT_TRUE(server.ok()) << server.failure();
  // 10 matrices of ~0.6 MB: together more than the budget, so some spill to the host.
  std::vector<csr> mats;
  std::vector<std::string> handles;
  for (int i = 0; i < 10; ++i) {
    mats.push_back(spgemm::generate("poisson2d5:" + std::to_string(95 + i)));
    handles.push_back(upload_ok(server.stub(), mats.back()));
  }
  v1::ServerStatus s0 = server_status(server.stub());
  EXPECT_GT(s0.host_cached_bytes(), 0) << "expected some matrices spilled to host";
  EXPECT_LE(s0.devices(0).cached_bytes(), budget);

  std::atomic<bool> done{false};
  std::atomic<int64_t> worst{0};
  std::atomic<int> max_running{0};
  std::thread poller([&] {
    auto stub = v1::Spgemm::NewStub(server.channel());
    while (!done) {
      v1::ServerStatus s = server_status(*stub);
      const int64_t used = s.devices(0).cached_bytes() + s.devices(0).reserved_bytes();
      worst = std::max<int64_t>(worst, used);
      max_running = std::max(max_running.load(), s.jobs_running());
      std::this_thread::sleep_for(2ms);
    }
  });
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      auto stub = v1::Spgemm::NewStub(server.channel());
      for (int i = 0; i < 3; ++i) {
        const int k = (t * 3 + i) % 10;
        result c = multiply(*stub, handles[k], handles[k], false, "", 60000ms);
        if (c.status.ok() && c.matrix.nnz() == spgemm::cpu_multiply(mats[k], mats[k]).nnz()) ++ok;
      }
    });
  }
  for (auto& c : clients) c.join();
  done = true;
  poller.join();
  EXPECT_EQ(ok.load(), 24);
  EXPECT_LE(worst.load(), budget);
  const std::string metrics = http_get(server.metrics_port(), "/metrics");
  const double peak = metric(metrics, device_series("spgemmd_device_used_peak_bytes"));
  EXPECT_GT(peak, 0);
  EXPECT_LE(peak, static_cast<double>(budget));
  EXPECT_GE(metric(metrics, "spgemmd_jobs_total{kind=\"multiply\",outcome=\"ok\"}"), 24);
  EXPECT_GT(metric(metrics, device_series("spgemmd_cache_hit_ratio")), 0);

  // A product larger than the budget runs in row panels: streamed (its header
  // says nnz -1), or kept in host memory.
  const csr dense = spgemm::generate("poisson3d27:20");  // ~2.6 MB; A*A ~12 MB
  const csr squared = spgemm::cpu_multiply(dense, dense);
  const std::string hd = upload_ok(server.stub(), dense);
  result r = multiply(server.stub(), hd, hd);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  expect_equal(r.matrix, squared, dense, dense, "streamed in panels");
  EXPECT_NE(r.stats.algorithm().find("row panels"), std::string::npos) << r.stats.algorithm();
  EXPECT_EQ(r.stats.nnz(), squared.nnz());
  result k = multiply(server.stub(), hd, hd, /*keep=*/true);
  ASSERT_TRUE(k.status.ok()) << k.status.error_message();
  EXPECT_EQ(k.kept.residency(), v1::HOST);
  expect_equal(download(server.stub(), k.kept.handle()).matrix, squared, dense, dense, "kept in panels");
  const v1::ServerStatus after = server_status(server.stub());
  EXPECT_GE(after.devices(0).bytes_to_host(), static_cast<int64_t>(2 * squared.bytes() - 16));
  EXPECT_EQ(after.devices(0).panels_in_flight(), 0);
  EXPECT_LE(metric(http_get(server.metrics_port(), "/metrics"), device_series("spgemmd_device_used_peak_bytes")),
            static_cast<double>(budget));
  // A matrix larger than every budget, the host's too, is refused.
  v1::MatrixInfo info;
  EXPECT_EQ(upload(server.stub(), spgemm::generate("poisson2d9:700"), &info).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(multiply(server.stub(), handles[0], handles[0]).status.ok());
}

// Two devices (two CPU backends standing in for GPUs): a product larger than
// one is split over both, its result equal to the product's; what moved
// shows in Status and the metrics.
TEST(service_panels, a_product_larger_than_a_device_is_split_over_every_device) {
  constexpr int64_t budget = 6 << 20;
  spgemmd_server server({"--device_budget_bytes=" + std::to_string(budget), "--cpu_backends=2", "--cpu_threads=1"},
                        with_metrics);
  ASSERT_TRUE(server.ok()) << server.failure();
  const csr dense = spgemm::generate("poisson3d27:20");
  const csr squared = spgemm::cpu_multiply(dense, dense);
  const std::string hd = upload_ok(server.stub(), dense);
  result r = multiply(server.stub(), hd, hd);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  expect_equal(r.matrix, squared, dense, dense, "split over two devices");
  const v1::ServerStatus s = server_status(server.stub());
  if (test_backend() == "cpu") {
    ASSERT_EQ(s.devices_size(), 2);
    EXPECT_EQ(s.devices(1).name(), "cpu:1");
    EXPECT_NE(r.stats.algorithm().find("on cpu:1"), std::string::npos) << r.stats.algorithm();
    EXPECT_GE(s.devices(1).bytes_from_peer(), static_cast<int64_t>(dense.bytes()));  // B, and rows of A
    EXPECT_GT(metric(http_get(server.metrics_port(), "/metrics"),
                     "spgemmd_device_bytes_moved_total{device=\"cpu:1\",direction=\"from_peer\"}"),
              0);
  }
  for (const auto& d : s.devices()) {
    EXPECT_EQ(d.panels_in_flight(), 0);
    EXPECT_EQ(d.reserved_bytes(), 0);
  }
}

TEST(service_shutdown, sigterm_stops_gracefully) {
  spgemmd_server server({});
  ASSERT_TRUE(server.ok()) << server.failure();
  const std::string h = upload_ok(server.stub(), spgemm::generate("poisson2d5:10"));
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(server.stop(SIGTERM, 15s), 0) << server.log();
  result r = multiply(server.stub(), h, h, false, "", 2000ms);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(server.log().find("event=stopped"), std::string::npos);
}
