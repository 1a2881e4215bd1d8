// Faults: clients killed in the middle of an upload or a download, a
// deadline that passes during a long multiply, SIGTERM while jobs run, and
// allocations that fail under a memory limit. Each leaves the server serving
// (or stopping as it should), holding nothing for the calls that failed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "health.grpc.pb.h"
#include "spgemm/generate.hpp"
#include "spgemmd_child.hpp"

namespace spgemm::attack {

namespace v1 = spgemm::v1;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Long enough to be in flight when the test acts (about 0.1 s a run on the
// CPU backend here), short enough to upload fast: ~16 MB.
const char* const upload_spec = "poisson3d7:64";
// A product that runs for seconds on the CPU backend with two threads (2.5e9
// scalar products into 1e7 entries: 2.6 s here, each of two at once 5 s).
const char* const long_product_spec = "band:10000:250:500";

void touch(const std::string& path) { std::ofstream(path) << "ready\n"; }

bool wait_for_file(const std::string& path, std::chrono::seconds within) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::string scratch_file(const std::string& name) {
  return (fs::temp_directory_path() / ("spgemmd-attack-" + std::to_string(getpid()) + "-" + name)).string();
}

void kill_child(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

grpc::health::v1::HealthCheckResponse::ServingStatus health(const std::shared_ptr<grpc::Channel>& channel,
                                                             grpc::Status* status) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 2s);
  grpc::health::v1::HealthCheckResponse resp;
  *status = stub->Check(&ctx, grpc::health::v1::HealthCheckRequest(), &resp);
  return resp.status();
}

}  // namespace

int run_child(const std::vector<std::string>& args) {
  const std::string& mode = args.at(0);
  auto channel = grpc::CreateChannel(args.at(1), grpc::InsecureChannelCredentials());
  auto stub = v1::Spgemm::NewStub(channel);
  grpc::ClientContext ctx;
  if (mode == "upload-half") {
    const csr m = spgemm::generate(upload_spec);
    v1::MatrixInfo info;
    auto writer = stub->Upload(&ctx, &info);
    v1::UploadPart header;
    *header.mutable_header() = header_of(m);
    writer->Write(header);
    const auto chunks = chunks_of(m, 1 << 20);
    for (std::size_t i = 0; i < chunks.size() / 2; ++i) writer->Write(chunks[i]);
    touch(args.at(2));
  } else if (mode == "download-some") {
    v1::DownloadRequest req;
    req.set_handle(args.at(2));
    req.set_chunk_bytes(64 << 10);
    auto reader = stub->Download(&ctx, req);
    v1::ResultPart part;
    reader->Read(&part);
    touch(args.at(3));
  } else {
    return 2;
  }
  std::this_thread::sleep_for(120s);  // killed long before
  return 0;
}

TEST(faults, a_client_killed_mid_upload_or_mid_download_leaves_nothing_behind) {
  spgemmd_child server({});
  ASSERT_TRUE(server.ok()) << server.log();
  const csr m = spgemm::generate(upload_spec);
  const std::string kept = upload(server.stub(), m);
  ASSERT_FALSE(kept.empty());
  const v1::ServerStatus before = server_status(server.stub());

  const std::string ready = scratch_file("upload-ready");
  const pid_t uploader = spawn_self({"upload-half", server.address(), ready});
  ASSERT_TRUE(wait_for_file(ready, 30s));
  // Half of it arrived: its room is held.
  EXPECT_GT(server_status(server.stub()).devices(0).reserved_bytes(), 0);
  kill_child(uploader);
  fs::remove(ready);
  ASSERT_TRUE(settles(server.stub()));

  const pid_t downloader = spawn_self({"download-some", server.address(), kept, ready});
  ASSERT_TRUE(wait_for_file(ready, 30s));
  kill_child(downloader);
  fs::remove(ready);
  ASSERT_TRUE(settles(server.stub()));

  const v1::ServerStatus after = server_status(server.stub());
  EXPECT_EQ(after.matrices(), before.matrices());
  EXPECT_EQ(after.devices(0).cached_bytes(), before.devices(0).cached_bytes());
  EXPECT_EQ(after.host_cached_bytes(), before.host_cached_bytes());
  const result again = download(server.stub(), kept);
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.matrix.col_indices, m.col_indices);
}

TEST(faults, a_deadline_during_a_long_cpu_multiply_stops_it_within_a_second) {
  spgemmd_child server({});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string h = upload(server.stub(), spgemm::generate(long_product_spec));
  ASSERT_FALSE(h.empty());
  const auto started = std::chrono::steady_clock::now();
  const result r = multiply(server.stub(), h, h, false, 300ms);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << r.status.error_message();
  // The job stops at the engine's next look at its cancel token, not when the product is done.
  bool stopped = false;
  while (!stopped && std::chrono::steady_clock::now() - started < 1300ms) {
    const v1::ServerStatus s = server_status(server.stub());
    stopped = s.jobs_running() == 0 && s.queue_depth() == 0 && s.devices(0).reserved_bytes() == 0;
    if (!stopped) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(stopped) << "the multiply ran on past its deadline";
}

TEST(faults, sigterm_while_jobs_run_says_not_serving_then_stops_within_the_grace) {
  spgemmd_child server({"--grace_seconds=2"});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string h = upload(server.stub(), spgemm::generate(long_product_spec));
  ASSERT_FALSE(h.empty());
  // Two products that outlast the grace (one kept), and an upload in flight.
  auto streamed = std::async(std::launch::async, [&] { return multiply(server.stub(), h, h, false); });
  auto kept = std::async(std::launch::async, [&] { return multiply(server.stub(), h, h, true); });
  grpc::ClientContext upload_ctx;
  v1::MatrixInfo upload_info;
  auto uploading = server.stub().Upload(&upload_ctx, &upload_info);
  const csr m = spgemm::generate(upload_spec);
  v1::UploadPart header;
  *header.mutable_header() = header_of(m);
  ASSERT_TRUE(uploading->Write(header));
  std::this_thread::sleep_for(300ms);

  const auto signalled = std::chrono::steady_clock::now();
  server.signal(SIGTERM);
  std::this_thread::sleep_for(300ms);
  // Still listening: health says NOT_SERVING, a new call hears why.
  grpc::Status health_status;
  EXPECT_EQ(health(server.channel(), &health_status), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_TRUE(health_status.ok()) << health_status.error_message();
  const result late = multiply(server.stub(), h, h);
  EXPECT_EQ(late.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(late.status.error_message().find("shutting down"), std::string::npos) << late.status.error_message();

  // The calls in flight are cancelled after the grace; nothing half done is a handle.
  const result s = streamed.get(), k = kept.get();
  EXPECT_FALSE(s.status.ok());
  EXPECT_FALSE(k.status.ok());
  uploading->WritesDone();
  EXPECT_FALSE(uploading->Finish().ok());
  EXPECT_EQ(server.wait_exit(5s), 0) << server.log();
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, 5s) << "well past the 2 s grace";
}

TEST(faults, allocations_that_fail_under_a_limit_become_statuses) {
  if (address_sanitized) GTEST_SKIP() << "RLIMIT_AS cannot hold AddressSanitizer's shadow memory";
  // Budgets far above what the 4 GiB of address space the server may map:
  // its allocations fail before the budgets say no.
  spgemmd_child server({"--device_budget_bytes=1099511627776", "--host_budget_bytes=1099511627776"},
                       std::size_t{4} << 30);
  ASSERT_TRUE(server.ok()) << server.log();
  // An upload whose arrays cannot be mapped (96 GB).
  v1::UploadPart huge;
  huge.mutable_header()->set_rows(1000000000);
  huge.mutable_header()->set_cols(1000000000);
  huge.mutable_header()->set_nnz(8000000000);
  huge.mutable_header()->set_value_type(v1::FLOAT64);
  const grpc::Status up = upload_parts(server.stub(), {huge});
  EXPECT_EQ(up.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << up.error_message();
  // A product of 4e8 entries (4.8 GB): a column of ones times a row of ones.
  constexpr int64_t n = 20000;
  csr column, row;
  column.rows = row.cols = n;
  column.cols = row.rows = 1;
  for (int64_t i = 0; i < n; ++i) {
    column.row_offsets.push_back(i + 1);
    column.col_indices.push_back(0);
    column.values.push_back(1.0);
    row.col_indices.push_back(static_cast<int32_t>(i));
    row.values.push_back(1.0);
  }
  row.row_offsets.push_back(n);
  grpc::Status uploaded;
  const std::string hc = upload(server.stub(), column, &uploaded);
  ASSERT_TRUE(uploaded.ok()) << uploaded.error_message();
  const std::string hr = upload(server.stub(), row, &uploaded);
  ASSERT_TRUE(uploaded.ok()) << uploaded.error_message();
  const result outer = multiply(server.stub(), hc, hr);
  EXPECT_EQ(outer.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << outer.status.error_message();
  ASSERT_TRUE(settles(server.stub()));
  // Still serving, and it stops when told.
  const result inner = multiply(server.stub(), hr, hc);
  ASSERT_TRUE(inner.status.ok()) << inner.status.error_message();
  EXPECT_EQ(inner.matrix.values.at(0), static_cast<double>(n));
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(10s), 0) << server.log();
}

}  // namespace spgemm::attack
