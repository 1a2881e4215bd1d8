// Helpers of the client tests: a spgemmd shared by the tests of a process, the CLI run as
// a child process, scratch files and the shared matrices.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "spgemmd_process.hpp"

namespace spgemm::client_test {

// spgemmd as a child process (tests/server/spgemmd_process.hpp).
using spgemmd::testing::spgemmd_binary;
using spgemmd::testing::spgemmd_process;

// A spgemmd (CPU backend unless SPGEMM_TEST_BACKEND says otherwise) on 127.0.0.1, started lazily and shared by the
// tests of one process; stopped at exit.
class test_server {
 public:
  // The address "127.0.0.1:PORT"; starts the server on first use (fails the
  // test with a message if it does not come up).
  static const std::string& address();
  static void stop();
};

// A fresh directory under the system's temp dir, removed at exit.
const std::string& scratch_dir();
std::string scratch_path(const std::string& name);
void write_text(const std::string& path, const std::string& text);

// A port on 127.0.0.1 that nothing listens on.
int closed_port();

struct run_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `spgemm ARGS...` (SPGEMM_CLI, or the build's) as a child process with
// SPGEMM_SERVER=server (unset when empty), stdin from /dev/null; for tests
// that signal it while it runs. SIGKILLed if still running when destroyed.
class cli_process {
 public:
  cli_process(const std::vector<std::string>& args, const std::string& server);
  cli_process(const cli_process&) = delete;
  cli_process& operator=(const cli_process&) = delete;
  ~cli_process();

  bool running();
  void signal(int sig);
  // Waits for the exit (SIGKILL after `timeout`): its code and output.
  run_result wait(std::chrono::seconds timeout = std::chrono::seconds(300));

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  std::string out_, err_;
};

// Runs `spgemm ARGS...` with SPGEMM_SERVER=server (unless empty).
run_result run_cli(const std::vector<std::string>& args, const std::string& server);

// The shared matrices folder (SPGEMM_MATRICES or the build's default), or ""
// when absent.
std::string matrices_dir();
// Whether a missing matrices folder must fail rather than skip.
bool matrices_required();

}  // namespace spgemm::client_test

// Skips (or fails with SPGEMM_REQUIRE_MATRICES=1) when the shared matrices are absent.
#define SPGEMM_NEED_MATRICES(dir)                                                               \
  const std::string dir = ::spgemm::client_test::matrices_dir();                                \
  if (dir.empty()) {                                                                            \
    if (::spgemm::client_test::matrices_required()) {                                           \
      FAIL() << "shared matrices not found (SPGEMM_MATRICES) and SPGEMM_REQUIRE_MATRICES=1";     \
    }                                                                                           \
    GTEST_SKIP() << "no shared matrices found (set SPGEMM_MATRICES): skipped";                  \
  }
