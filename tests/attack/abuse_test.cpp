// Abuse that costs the attacker little: headers that claim more than they
// send, names and lists without end, TTLs that overflow, and slow or stalled
// clients on the gRPC port and the metrics port. None of it makes the server
// commit memory it was not sent, or stop answering others.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>

#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "spgemmd_child.hpp"

namespace spgemm::attack {

namespace v1 = spgemm::v1;
using namespace std::chrono_literals;

namespace {

constexpr int64_t MiB = 1 << 20;

// An upload stream left open after its first parts.
struct open_upload {
  grpc::ClientContext ctx;
  v1::MatrixInfo info;
  std::unique_ptr<grpc::ClientWriter<v1::UploadPart>> writer;
};

// A header of `rows` rows with `per_row` entries each (columns 0, 1, ...).
v1::UploadPart banded_header(int64_t rows, int64_t per_row) {
  v1::UploadPart p;
  p.mutable_header()->set_rows(rows);
  p.mutable_header()->set_cols(rows);
  p.mutable_header()->set_nnz(rows * per_row);
  p.mutable_header()->set_value_type(v1::FLOAT64);
  return p;
}

// Rows [begin, begin + count) of that matrix.
v1::UploadPart banded_chunk(int64_t begin, int64_t count, int64_t per_row) {
  v1::UploadPart p;
  v1::MatrixChunk* c = p.mutable_chunk();
  c->set_row_begin(begin);
  c->set_row_count(count);
  std::vector<int64_t> offsets(static_cast<std::size_t>(count + 1));
  for (int64_t i = 0; i <= count; ++i) offsets[static_cast<std::size_t>(i)] = i * per_row;
  std::vector<int32_t> cols(static_cast<std::size_t>(count * per_row));
  for (std::size_t k = 0; k < cols.size(); ++k) cols[k] = static_cast<int32_t>(k % static_cast<std::size_t>(per_row));
  const std::vector<double> values(cols.size(), 1.0);
  c->set_row_offsets(std::string(reinterpret_cast<const char*>(offsets.data()), offsets.size() * 8));
  c->set_col_indices(std::string(reinterpret_cast<const char*>(cols.data()), cols.size() * 4));
  c->set_values(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 8));
  return p;
}

// The server's RSS once it has had a moment to settle.
int64_t settled_rss(spgemmd_child& server) {
  std::this_thread::sleep_for(300ms);
  return server.rss_bytes();
}

}  // namespace

TEST(abuse, a_header_claiming_1e12_nonzeros_leaves_rss_unchanged) {
  // Within the default budget it is refused at once; within a budget of
  // 16 TiB its arrays cannot be mapped, and that is refused too.
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{}, {"--device_budget_bytes=17592186044416", "--host_budget_bytes=17592186044416"}}) {
    spgemmd_child server(flags);
    ASSERT_TRUE(server.ok()) << server.log();
    (void)server_status(server.stub());
    const int64_t baseline = settled_rss(server);
    for (int i = 0; i < 4; ++i) {
      v1::UploadPart claim = banded_header(1000000, 1000000);  // 10^12 nonzeros
      const grpc::Status s = upload_parts(server.stub(), {claim});
      EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    }
    EXPECT_LT(settled_rss(server) - baseline, 8 * MiB);
    EXPECT_TRUE(settles(server.stub()));
    EXPECT_FALSE(upload(server.stub(), spgemm::generate("poisson2d5:10")).empty());
  }
}

TEST(abuse, headers_hold_budget_not_memory_and_memory_comes_with_the_chunks) {
  // Room for one 1 GB matrix: on the device (1 GiB) or in the host budget (256 MiB), not both.
  spgemmd_child server({"--device_budget_bytes=1073741824", "--host_budget_bytes=268435456"});
  ASSERT_TRUE(server.ok()) << server.log();
  (void)server_status(server.stub());
  const int64_t baseline = settled_rss(server);
  constexpr int64_t rows = 10000000, per_row = 8;  // 1.04 GB claimed
  std::vector<std::unique_ptr<open_upload>> uploads;
  auto open = [&] {
    auto u = std::make_unique<open_upload>();
    u->ctx.set_deadline(std::chrono::system_clock::now() + 60s);
    u->writer = server.stub().Upload(&u->ctx, &u->info);
    u->writer->Write(banded_header(rows, per_row));
    uploads.push_back(std::move(u));
  };
  // The first holds its room...
  open();
  v1::ServerStatus held;
  for (int i = 0; i < 200 && held.devices_size() == 0; ++i) {
    held = server_status(server.stub());
    if (held.devices(0).reserved_bytes() == 0) held.Clear();
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(held.devices_size(), 1) << "the first header never held room";
  EXPECT_GE(held.devices(0).reserved_bytes(), rows * 8 + rows * per_row * 12);
  // ...and the others are refused at their headers: there is none left.
  for (int i = 1; i < 4; ++i) {
    open();
    const grpc::Status s = uploads.back()->writer->Finish();  // the server ends it: no WritesDone
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find("no room"), std::string::npos) << s.error_message();
  }
  EXPECT_LT(server.rss_bytes() - baseline, 8 * MiB) << "a header's claim committed memory";

  // 48 MiB of rows arrive: the memory committed follows them (the upload's
  // arrays and the CPU backend's copy), not the 1 GB claimed.
  constexpr int64_t chunk_rows = 32768;
  int64_t sent = 0;
  for (int64_t begin = 0; sent < 48 * MiB; begin += chunk_rows) {
    ASSERT_TRUE(uploads[0]->writer->Write(banded_chunk(begin, chunk_rows, per_row)));
    sent += chunk_rows * (8 + per_row * 12);
  }
  std::this_thread::sleep_for(500ms);
  // Beside the two copies: the pages mapped ahead of the chunks (32 MiB) and
  // gRPC's message buffers, more of them on hosts with more cores.
  const int64_t grown = server.rss_bytes() - baseline;
  EXPECT_LT(grown, 2 * sent + 128 * MiB) << "grew " << grown / MiB << " MiB for " << sent / MiB << " MiB sent";

  uploads[0]->ctx.TryCancel();
  (void)uploads[0]->writer->Finish();
  ASSERT_TRUE(settles(server.stub()));
  const v1::ServerStatus after = server_status(server.stub());
  EXPECT_EQ(after.matrices(), 0);
  EXPECT_EQ(after.host_cached_bytes(), 0);
}

TEST(abuse, long_names_are_refused_and_lists_come_in_bounded_pages) {
  spgemmd_child server({});
  ASSERT_TRUE(server.ok()) << server.log();
  const csr tiny = spgemm::generate("poisson2d5:1");
  (void)server_status(server.stub());
  const int64_t baseline = settled_rss(server);
  for (int i = 0; i < 40; ++i) {  // 40 MB of names: none is kept
    grpc::Status s;
    EXPECT_TRUE(upload(server.stub(), tiny, &s, std::string(1 << 20, 'n')).empty());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  EXPECT_LT(settled_rss(server) - baseline, 16 * MiB);
  EXPECT_EQ(server_status(server.stub()).matrices(), 0);

  // 2100 matrices with the longest names: three pages, each one once, in order.
  std::vector<std::string> handles;
  for (int i = 0; i < 2100; ++i) {
    handles.push_back(upload(server.stub(), tiny, nullptr, std::string(256, static_cast<char>('a' + i % 26))));
    ASSERT_FALSE(handles.back().empty());
  }
  std::vector<std::string> listed;
  std::string token;
  int pages = 0;
  do {
    v1::ListRequest req;
    req.set_page_token(token);
    req.set_page_size(5000);  // cut to the server's 1000
    std::vector<std::string> replies;
    const grpc::Status s = raw_call(server.channel(), "/spgemm.v1.Spgemm/List", {bytes_of(req)}, &replies);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_LT(replies[0].size(), std::size_t{1} << 20) << "a page of a List stays small";
    v1::ListResponse page;
    ASSERT_TRUE(page.ParseFromString(replies[0]));
    EXPECT_LE(page.matrices_size(), 1000);
    for (const auto& m : page.matrices()) listed.push_back(m.handle());
    token = page.next_page_token();
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(listed, handles);
}

TEST(abuse, a_ttl_near_int64_max_is_cut_to_ten_years_not_expired_now) {
  spgemmd_child server({});
  ASSERT_TRUE(server.ok()) << server.log();
  for (const int64_t ttl : {int64_t{9'300'000'000}, std::numeric_limits<int64_t>::max()}) {
    v1::UploadPart header;
    const csr m = spgemm::generate("poisson2d5:3");
    *header.mutable_header() = header_of(m);
    header.mutable_header()->set_ttl_seconds(ttl);
    std::vector<v1::UploadPart> parts = {header};
    for (const auto& c : chunks_of(m, 1 << 20)) parts.push_back(c);
    grpc::ClientContext ctx;
    v1::MatrixInfo info;
    auto writer = server.stub().Upload(&ctx, &info);
    for (const auto& p : parts) writer->Write(p);
    writer->WritesDone();
    ASSERT_TRUE(writer->Finish().ok());
    EXPECT_EQ(info.ttl_seconds(), int64_t{10} * 365 * 24 * 3600);
    std::this_thread::sleep_for(1500ms);  // past a sweep
    EXPECT_TRUE(download(server.stub(), info.handle()).status.ok());
  }
}

TEST(abuse, the_metrics_port_answers_healthz_under_slow_and_stalled_clients) {
  spgemmd_child server({});
  ASSERT_TRUE(server.ok()) << server.log();
  const int port = server.metrics_port();
  // Slow senders: a request's bytes one per 0.7 s; stalled readers: a
  // request for /metrics, never read.
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow;
  for (int i = 0; i < 3; ++i) {
    slow.emplace_back([&] {
      const int fd = connect_loopback(port);
      const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
      for (std::size_t k = 0; k < req.size() && !stop; ++k) {
        if (send(fd, &req[k], 1, MSG_NOSIGNAL) != 1) break;
        std::this_thread::sleep_for(700ms);
      }
      close(fd);
    });
  }
  std::vector<int> stalled;
  for (int i = 0; i < 8; ++i) {
    stalled.push_back(connect_loopback(port));
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    send(stalled.back(), req.data(), req.size(), MSG_NOSIGNAL);
  }
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(500ms);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string health = http_get(port, "/healthz", 1s);
    EXPECT_NE(health.find("200 OK"), std::string::npos) << "try " << i;
    EXPECT_NE(health.find("\r\n\r\nok\n"), std::string::npos) << health;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  }
  const std::string metrics = http_get(port, "/metrics", 2s);
  EXPECT_NE(metrics.find("Content-Type: text/plain"), std::string::npos);
  EXPECT_GE(metric(metrics, "spgemmd_queue_depth"), 0) << metrics.substr(0, 2000);
  EXPECT_NE(http_get(port, "/nowhere").find("404"), std::string::npos);
  // SIGTERM with them still connected: it stops, within the grace.
  const auto signalled = std::chrono::steady_clock::now();
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(10s), 0) << server.log();
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, 6s);
  stop = true;
  for (auto& t : slow) t.join();
  for (int fd : stalled) close(fd);
}

TEST(abuse, the_grpc_port_serves_others_beside_a_slow_sender_and_a_stalled_reader) {
  spgemmd_child server({});
  ASSERT_TRUE(server.ok()) << server.log();
  const csr big = spgemm::generate("poisson3d7:64");  // 16 MB
  const csr a = spgemm::generate("poisson2d5:64");
  const std::string hb = upload(server.stub(), big), ha = upload(server.stub(), a);
  ASSERT_FALSE(hb.empty());
  ASSERT_FALSE(ha.empty());
  const int64_t baseline = settled_rss(server);
  // A slow sender: a chunk of one row every 100 ms.
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    grpc::ClientContext ctx;
    v1::MatrixInfo info;
    auto writer = server.stub().Upload(&ctx, &info);
    writer->Write(banded_header(1000, 4));
    for (int64_t r = 0; r < 1000 && !stop; ++r) {
      if (!writer->Write(banded_chunk(r, 1, 4))) break;
      std::this_thread::sleep_for(100ms);
    }
    ctx.TryCancel();
    (void)writer->Finish();
  });
  // A stalled reader: a download of 16 MB in 64 KiB chunks, one read and no more.
  grpc::ClientContext stalled_ctx;
  v1::DownloadRequest req;
  req.set_handle(hb);
  req.set_chunk_bytes(64 << 10);
  auto stalled = server.stub().Download(&stalled_ctx, req);
  v1::ResultPart part;
  ASSERT_TRUE(stalled->Read(&part));
  // The others: round trips as usual.
  const csr squared = spgemm::cpu_multiply(a, a);
  for (int i = 0; i < 20; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const result r = multiply(server.stub(), ha, ha);
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    EXPECT_EQ(r.matrix.col_indices, squared.col_indices);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  }
  // The stalled reader holds what gRPC buffers and a fetched block, not more.
  EXPECT_LT(server.rss_bytes() - baseline, 96 * MiB);
  stop = true;
  sender.join();
  stalled_ctx.TryCancel();
  (void)stalled->Finish();
  EXPECT_TRUE(settles(server.stub()));
}

}  // namespace spgemm::attack
