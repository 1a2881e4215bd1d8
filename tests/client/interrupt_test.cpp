// Interrupts leave nothing behind: a `spgemm multiply` stopped by SIGINT
// while its job runs, or by SIGTERM while it writes its output, exits with
// 128 + the signal, leaves no matrix on the server and no file, whole or
// partial, where its output was to go.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "spgemm/client/client.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

namespace fs = std::filesystem;
namespace sc = spgemm::client;

// A pattern .mtx of `blocks` dense b x b blocks on the diagonal: cheap to
// write and read, yet b^2 products per entry, so that its square keeps a
// one-thread CPU server busy for a while and its product is as large as it.
std::string dense_blocks_file(int blocks, int b) {
  const std::string path = scratch_path("blocks" + std::to_string(blocks) + "x" + std::to_string(b) + ".mtx");
  if (fs::exists(path)) return path;
  const std::int64_t n = std::int64_t{blocks} * b;
  std::string text = "%%MatrixMarket matrix coordinate pattern general\n";
  text += std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(n * b) + "\n";
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t first = r / b * b;
    for (std::int64_t c = first; c < first + b; ++c) text += std::to_string(r + 1) + " " + std::to_string(c + 1) + "\n";
  }
  write_text(path, text);
  return path;
}

// Its own server (so `ls` is empty before), on the CPU with one thread
// whatever SPGEMM_TEST_BACKEND says: the job must outlast the polling below.
class CliInterrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(server_.start({"--backend=cpu", "--cpu_threads=1"}), "");
    sc::connection_options o;
    o.address = server_.address();
    o.deadline = std::chrono::seconds(30);
    watcher_ = std::make_unique<sc::Client>(o);
    ASSERT_TRUE(watcher_->list().empty());
  }

  // Waits (up to a minute) until `ready()` holds while the CLI still runs.
  void wait_for(cli_process& cli, const std::function<bool()>& ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!ready()) {
      ASSERT_TRUE(cli.running()) << "spgemm finished before it could be interrupted:\n" << cli.wait().err;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "timed out";
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  void expect_nothing_left(const std::string& out_dir) {
    EXPECT_TRUE(watcher_->list().empty()) << "matrices left on the server";
    for (const auto& entry : fs::directory_iterator(out_dir)) ADD_FAILURE() << "left behind: " << entry.path();
    // The cancelled job stops (at its next phase boundary).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (watcher_->status().jobs_running() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(watcher_->status().jobs_running(), 0);
  }

  std::string fresh_dir(const std::string& name) {
    const std::string dir = scratch_path(name);
    fs::create_directories(dir);
    return dir;
  }

  spgemmd_process server_;
  std::unique_ptr<sc::Client> watcher_;
};

TEST_F(CliInterrupt, SigintWhileTheJobRunsCancelsItAndDeletesTheOperands) {
  const std::string in = dense_blocks_file(96, 128);
  const std::string out_dir = fresh_dir("sigint");
  cli_process cli({"multiply", in, "-o", out_dir + "/C.mtx"}, server_.address());
  // A job admitted or queued: the upload has returned to the CLI.
  wait_for(cli, [&] {
    const auto s = watcher_->status();
    return s.jobs_running() + s.queue_depth() > 0;
  });
  cli.signal(SIGINT);
  const run_result r = cli.wait(std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGINT"), std::string::npos) << r.err;
  expect_nothing_left(out_dir);
}

TEST_F(CliInterrupt, SigtermWhileTheOutputIsWrittenRemovesThePartialFile) {
  const std::string in = dense_blocks_file(96, 128);
  const std::string out_dir = fresh_dir("sigterm");
  cli_process cli({"multiply", in, "-o", out_dir + "/C.mtx"}, server_.address());
  // The output is written to a hidden file beside C.mtx, renamed when complete.
  wait_for(cli, [&] { return !fs::is_empty(out_dir); });
  cli.signal(SIGTERM);
  const run_result r = cli.wait(std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGTERM"), std::string::npos) << r.err;
  expect_nothing_left(out_dir);
}

}  // namespace
}  // namespace spgemm::client_test
