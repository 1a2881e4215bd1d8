// spgemm::client::Cluster against three real spgemmd processes (CPU backend)
// on loopback: jobs spread over all of them, a product split by row panels
// equals the single-server product exactly, and a server stopped mid-run has
// its panels fail over to the others.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "spgemm/client/cluster.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

namespace sc = spgemm::client;

// One spgemmd of the cluster: a single CPU thread (three share two cores) and
// no grace on SIGTERM, so a stop cancels what it runs.
std::unique_ptr<spgemmd_process> start_member() {
  return std::make_unique<spgemmd_process>(
      std::vector<std::string>{"--backend=cpu", "--cpu_threads=1", "--grace_seconds=0", "--warmup=false"});
}

sc::csr_matrix to_client(const spgemm::csr_matrix<double>& m) {
  sc::csr_matrix c;
  c.rows = m.rows;
  c.cols = m.cols;
  c.row_offsets.assign(m.row_offsets.begin(), m.row_offsets.end());
  c.col_indices.assign(m.col_indices.begin(), m.col_indices.end());
  c.values.assign(m.values.begin(), m.values.end());
  return c;
}

spgemm::csr_matrix<double> to_engine(const sc::csr_matrix& m) {
  spgemm::csr_matrix<double> e;
  e.rows = m.rows;
  e.cols = m.cols;
  e.row_offsets.assign(m.row_offsets.begin(), m.row_offsets.end());
  e.col_indices.assign(m.col_indices.begin(), m.col_indices.end());
  e.values.assign(m.values.begin(), m.values.end());
  return e;
}

// Structure identical, values within 1e-12 of the row's scale (every CPU
// server computes a row the same way, so they are in fact bit-identical).
void expect_same(const sc::csr_matrix& got, const sc::csr_matrix& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  ASSERT_EQ(got.row_offsets, want.row_offsets);
  ASSERT_EQ(got.col_indices, want.col_indices);
  ASSERT_EQ(got.values.size(), want.values.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    const double scale = std::max(1.0, std::abs(want.values[i]));
    if (std::abs(got.values[i] - want.values[i]) > 1e-12 * scale) ++differ;
  }
  EXPECT_EQ(differ, 0u) << "values differ from the single-server product";
}

sc::connection_options base_options() {
  sc::connection_options o;
  o.deadline = std::chrono::seconds(120);
  return o;
}

class Cluster : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_dir();
    for (int i = 0; i < 3; ++i) {
      servers_.push_back(start_member());
      ASSERT_TRUE(servers_.back()->serving()) << servers_.back()->failure();
      addresses_.push_back(servers_.back()->address());
    }
  }

  sc::cluster_options options() const {
    sc::cluster_options o;
    o.connection = base_options();
    return o;
  }

  // The product computed by one server alone (server 0).
  sc::csr_matrix single_server(const sc::csr_matrix& a, const sc::csr_matrix& b) {
    sc::connection_options o = base_options();
    o.address = addresses_[0];
    sc::Client c(o);
    auto ra = c.upload(a);
    auto rb = c.upload(b);
    return c.multiply(ra.handle(), rb.handle()).matrix;
  }

  std::vector<std::unique_ptr<spgemmd_process>> servers_;
  std::vector<std::string> addresses_;
};

TEST(ClusterUnits, PanelBoundsBalanceNnz) {
  // Rows with 1, 1, 1, 1, 8, 1, 1, 1, 1 entries: the heavy row gets a panel
  // of its own, the rest split around it.
  std::vector<std::int64_t> off{0, 1, 2, 3, 4, 12, 13, 14, 15, 16};
  auto b = sc::panel_bounds(off, 3);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b.front(), 0);
  EXPECT_EQ(b.back(), 9);
  for (std::size_t i = 1; i < b.size(); ++i) EXPECT_LT(b[i - 1], b[i]);
  // Never more panels than rows, never an empty one.
  EXPECT_EQ(sc::panel_bounds({0, 5, 5}, 8), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(sc::panel_bounds({0, 0, 0, 0, 0}, 2), (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(sc::panel_bounds({0}, 3), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(sc::split_addresses(" a:1, b:2,,c:3 "), (std::vector<std::string>{"a:1", "b:2", "c:3"}));
  EXPECT_TRUE(sc::is_failover_error(grpc::StatusCode::UNAVAILABLE));
  EXPECT_TRUE(sc::is_failover_error(grpc::StatusCode::NOT_FOUND));
  EXPECT_FALSE(sc::is_failover_error(grpc::StatusCode::INVALID_ARGUMENT));
}

TEST_F(Cluster, PanelsEqualTheSingleServerProduct) {
  const auto a = to_client(spgemm::generate("rmat:12:8:3"));
  const auto b = to_client(spgemm::generate("rmat:12:4:5"));
  const auto want = single_server(a, b);
  // And that agrees with the engine's reference.
  const auto ref = spgemm::cpu_multiply(to_engine(a), to_engine(b), 1);
  ASSERT_EQ(want.col_indices, ref.col_indices);

  sc::Cluster cluster(addresses_, options());
  ASSERT_EQ(cluster.size(), 3u);
  for (int panels : {0, 1, 3, 7}) {
    sc::panel_options po;
    po.panels = panels;
    auto r = cluster.multiply_panels(a, b, po);
    SCOPED_TRACE("panels=" + std::to_string(panels));
    expect_same(r.matrix, want);
    EXPECT_EQ(r.panels.size(), static_cast<std::size_t>(panels ? panels : 3));
    EXPECT_TRUE(r.failed_servers.empty());
    std::set<std::size_t> used;
    for (const auto& p : r.panels) {
      EXPECT_EQ(p.attempts, 1);
      used.insert(p.server);
    }
    if (panels == 0 || panels >= 3) {
      EXPECT_EQ(used.size(), 3u) << "panels should use every server";
    }
  }
  // Rectangular A (a panel of rows with a different column count) and a
  // mismatched shape, which is the input's error.
  const auto wide = to_client(spgemm::generate("poisson2d5:64"));  // 4096 x 4096
  auto r = cluster.multiply_panels(wide, b);
  expect_same(r.matrix, single_server(wide, b));
  sc::csr_matrix bad = b;
  bad.rows = 10;
  bad.row_offsets.resize(11);
  EXPECT_THROW(cluster.multiply_panels(a, bad), sc::Error);
  // The server's INVALID_ARGUMENT is raised at once and marks no server down.
  sc::panel_options unknown;
  unknown.product.algorithm = "no-such-method";
  try {
    cluster.multiply_panels(a, b, unknown);
    ADD_FAILURE() << "an unknown algorithm was accepted";
  } catch (const sc::Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT) << e.what();
  }
  for (std::size_t i = 0; i < cluster.size(); ++i) EXPECT_TRUE(cluster.is_up(i)) << i;

  // Every handle the cluster stored is gone.
  for (std::size_t i = 0; i < cluster.size(); ++i) EXPECT_TRUE(cluster.client(i).list().empty()) << i;
}

TEST_F(Cluster, IndependentJobsSpreadOverEveryServer) {
  std::vector<sc::csr_matrix> mats;
  for (int k = 0; k < 9; ++k) mats.push_back(to_client(spgemm::generate("rmat:10:4:" + std::to_string(k + 1))));
  std::vector<std::pair<const sc::csr_matrix*, const sc::csr_matrix*>> jobs;
  for (const auto& m : mats) jobs.emplace_back(&m, &m);
  sc::Cluster cluster(addresses_, options());
  auto results = cluster.multiply_all(jobs);
  ASSERT_EQ(results.size(), jobs.size());
  for (std::size_t k = 0; k < mats.size(); ++k) {
    const auto ref = spgemm::cpu_multiply(to_engine(mats[k]), to_engine(mats[k]), 1);
    EXPECT_EQ(results[k].matrix.col_indices, ref.col_indices) << k;
  }
  std::vector<bool> ok;
  auto st = cluster.status(&ok);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(ok[i]);
    EXPECT_GE(st[i].jobs_completed(), 1) << "server " << i << " got no job";
    total += st[i].jobs_completed();
  }
  EXPECT_EQ(total, 9);
  // One at a time: least outstanding ties go round robin, so 3 in a row hit 3 servers.
  std::set<std::size_t> used;
  for (int k = 0; k < 3; ++k) {
    std::size_t where = 99;
    cluster.multiply(mats[0], mats[0], {}, &where);
    used.insert(where);
  }
  EXPECT_EQ(used.size(), 3u);
}

TEST_F(Cluster, AStoppedServerFailsOverItsPanels) {
  const auto a = to_client(spgemm::generate("rmat:14:8:7"));
  const auto want = single_server(a, a);
  sc::Cluster cluster(addresses_, options());
  for (int sig : {SIGTERM, SIGKILL}) {
    SCOPED_TRACE(sig == SIGTERM ? "SIGTERM" : "SIGKILL");
    // Stop server 1 while the product runs: once it has started a panel (its
    // own job in flight: the stop cancels it or cuts the connection), or
    // right before its next one is sent.
    const std::size_t victim = sig == SIGTERM ? 1 : 2;
    std::atomic<bool> stopped{false};
    std::thread stopper;
    sc::panel_options po;
    po.panels = 12;
    po.before_attempt = [&](std::size_t, std::size_t server, int) {
      if (server != victim || stopped.exchange(true)) return;
      if (sig == SIGTERM) {
        // Mid-panel: lets the panel's upload and multiply reach the server first.
        stopper = std::thread([&, sig] {
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
          servers_[victim]->stop(sig);
        });
      } else {
        servers_[victim]->stop(sig);
      }
    };
    auto r = cluster.multiply_panels(a, a, po);
    if (stopper.joinable()) stopper.join();
    ASSERT_TRUE(stopped);
    expect_same(r.matrix, want);
    ASSERT_EQ(r.panels.size(), 12u);
    EXPECT_FALSE(cluster.is_up(victim));
    bool retried = false;
    int retries = 0;
    for (const auto& p : r.panels) {
      if (p.attempts > 1) retried = true;
      retries += p.attempts - 1;
    }
    std::fprintf(stderr, "[ cluster  ] %s: %d panel attempt(s) failed over, %zu server(s) marked down\n",
                 sig == SIGTERM ? "SIGTERM" : "SIGKILL", retries, r.failed_servers.size());
    // The panel in flight on the victim either finished before the stop took
    // effect or ran again elsewhere; either way no later one ran there.
    if (sig == SIGKILL) {
      EXPECT_TRUE(retried) << "the panel sent to the stopped server was not retried";
      EXPECT_EQ(r.failed_servers, std::vector<std::size_t>{victim});
    }
    std::size_t on_victim = 0;
    for (const auto& p : r.panels) on_victim += p.server == victim;
    EXPECT_LE(on_victim, 1u);
  }
  // Both stopped: one server left still does the whole product.
  auto r = cluster.multiply_panels(a, a);
  expect_same(r.matrix, want);
  for (const auto& p : r.panels) EXPECT_EQ(p.server, 0u);
  // None left: the last connection error.
  servers_[0]->stop(SIGKILL);
  try {
    cluster.multiply_panels(a, a);
    ADD_FAILURE() << "no server left, yet no error";
  } catch (const sc::Error& e) {
    EXPECT_TRUE(sc::is_failover_error(e.code())) << e.what();
  }
}

TEST_F(Cluster, CliSplitsPanelsOverAServerList) {
  const auto a = to_client(spgemm::generate("rmat:11:8:9"));
  const std::string in = scratch_path("cluster-cli-a.mtx");
  const std::string out = scratch_path("cluster-cli-c.mtx");
  sc::write_matrix_market(in, a);
  const auto want = single_server(a, a);
  const std::string list = addresses_[0] + "," + addresses_[1] + "," + addresses_[2];
  auto r = run_cli({"multiply", in, "-o", out, "--panels", "5", "--stats"}, list);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("panel 4"), std::string::npos) << r.err;
  expect_same(sc::read_matrix_market(out), want);
  // No --panels: one job on one of them.
  r = run_cli({"multiply", in, in, "-o", out}, list);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same(sc::read_matrix_market(out), want);
  // A list for a one-server command, and --keep with a list, are usage errors.
  EXPECT_EQ(run_cli({"ls"}, list).exit_code, 2);
  EXPECT_EQ(run_cli({"multiply", in, "--keep"}, list).exit_code, 2);
}

TEST_F(Cluster, DnsNameOfOneAddressUsesRoundRobinChannel) {
  // localhost resolves to one or two loopback addresses; either way the
  // cluster works through the name (the server listens on 127.0.0.1 only, so
  // an IPv6 entry is simply marked down).
  const std::string port = addresses_[0].substr(addresses_[0].rfind(':') + 1);
  sc::Cluster cluster({"dns:///localhost:" + port}, options());
  ASSERT_GE(cluster.size(), 1u);
  const auto m = to_client(spgemm::generate("poisson2d5:16"));
  auto r = cluster.multiply(m, m);
  EXPECT_EQ(r.matrix.rows, m.rows);
}

}  // namespace
}  // namespace spgemm::client_test
