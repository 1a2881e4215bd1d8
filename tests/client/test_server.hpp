// Helpers of the client tests: a spgemmd started on loopback, the CLI run as
// a child process, scratch files and the shared matrices.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace spgemm::client_test {

// SPGEMMD, or the build's spgemmd.
std::string spgemmd_binary();

// A spgemmd child process listening on a free port of 127.0.0.1; its output
// goes to a log in the scratch dir. Stopped (SIGTERM) when destroyed.
class spgemmd_process {
 public:
  spgemmd_process() = default;
  spgemmd_process(const spgemmd_process&) = delete;
  spgemmd_process& operator=(const spgemmd_process&) = delete;
  ~spgemmd_process() { stop(SIGTERM); }

  // Starts spgemmd_binary() with `flags` after the listen, port file and
  // metrics flags (a flag given again in `flags` wins); its files are
  // TAG.port and TAG.log in the scratch dir. Empty on success, else what went
  // wrong (with the log).
  std::string start(const std::string& tag, const std::vector<std::string>& flags);
  // Sends `sig`, waits up to 5 s for the exit, then SIGKILLs.
  void stop(int sig);

  // "127.0.0.1:PORT" once started.
  const std::string& address() const { return address_; }

 private:
  pid_t pid_ = -1;
  std::string address_;
};

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
