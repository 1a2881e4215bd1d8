// spgemmd started as a child process by a test (the server, attack and client
// suites): the build's binary or $SPGEMMD, on a free loopback port that it
// writes to a port file in a temporary folder of its own, its output kept as
// its log. It dies with the test's process; the object's end kills it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace spgemmd::testing {

// $SPGEMMD, else the build's spgemmd.
std::string spgemmd_binary();
// The backend of the servers the suites start: SPGEMM_TEST_BACKEND ("auto"
// on a GPU host runs a suite on the GPUs), else "cpu".
std::string test_backend();

// Forks and execs `args` (args[0] the binary) with stdout and stderr to `log`
// (where given) and RLIMIT_AS `address_space` (where > 0); the child dies
// with the caller. Its pid, or -1.
pid_t spawn(std::vector<std::string> args, const std::string& log = "", std::size_t address_space = 0);

struct spgemmd_options {
  bool metrics = false;                 // a Prometheus endpoint on a free loopback port
  std::size_t address_space_bytes = 0;  // > 0: the child's RLIMIT_AS, so that allocations fail first
};

class spgemmd_process {
 public:
  spgemmd_process() = default;
  // start(flags, options), its failure left for serving() and failure().
  explicit spgemmd_process(const std::vector<std::string>& flags, const spgemmd_options& options = {});
  ~spgemmd_process();
  spgemmd_process(const spgemmd_process&) = delete;
  spgemmd_process& operator=(const spgemmd_process&) = delete;

  // Starts spgemmd with `flags` after the defaults (the port, test_backend(),
  // two CPU threads, a grace of 5 s, no metrics unless asked; a flag given
  // again wins) and waits until it serves, exits, or 30 s passed. "" once it
  // serves, else what went wrong, with its log. Once.
  std::string start(const std::vector<std::string>& flags, const spgemmd_options& options = {});

  // Its port came and it still runs.
  bool serving();
  // "" where it serves, else why not (with its log).
  std::string failure();
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return pid_; }
  // "127.0.0.1:PORT".
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const;
  // Resident memory now (VmRSS), in bytes; -1 once it ended.
  int64_t rss_bytes() const;

  // Sends `sig`; no wait.
  void signal(int sig);
  // Its exit status once it ended within `within` (128 + the signal that
  // ended it), else -1.
  int wait_exit(std::chrono::milliseconds within = std::chrono::seconds(15));
  // Sends `sig`, waits up to `within` for the exit, else SIGKILLs it; its
  // exit status.
  int stop(int sig, std::chrono::milliseconds within = std::chrono::seconds(5));

 private:
  bool running();

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0, metrics_port_ = 0;
  bool exited_ = false;
  int status_ = -1;
  std::string failure_;
};

}  // namespace spgemmd::testing
