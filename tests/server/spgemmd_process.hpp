// spgemmd started as a child process for a test: on a free port (written to
// a port file in a temporary folder of its own), CPU backend unless
// SPGEMM_TEST_BACKEND says otherwise, its stderr kept as its log. A test
// sends it signals, and reads how it ended.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace spgemmd::testing {

class spgemmd_process {
 public:
  // Starts spgemmd with `flags` after the defaults (a loopback port, no
  // metrics, two CPU threads), and waits until it serves or exits.
  explicit spgemmd_process(const std::vector<std::string>& flags) {
    using namespace std::chrono_literals;
    static std::atomic<int> counter{0};
    dir_ = std::filesystem::temp_directory_path() /
           ("spgemmd-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    const char* binary = std::getenv("SPGEMMD");
    const char* backend = std::getenv("SPGEMM_TEST_BACKEND");
    std::vector<std::string> args = {binary && *binary ? binary : SPGEMMD_BINARY,
                                     "--listen=127.0.0.1:0",
                                     "--port_file=" + (dir_ / "port").string(),
                                     "--metrics_listen=",
                                     std::string("--backend=") + (backend && *backend ? backend : "cpu"),
                                     "--cpu_threads=2",
                                     "--grace_seconds=5"};
    args.insert(args.end(), flags.begin(), flags.end());
    pid_ = fork();
    if (pid_ == 0) {
      if (std::freopen((dir_ / "log").c_str(), "w", stderr) == nullptr) _exit(126);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    for (int i = 0; i < 600 && port_ == 0 && running(); ++i) {
      std::this_thread::sleep_for(50ms);
      std::ifstream p(dir_ / "port");
      p >> port_;
    }
  }

  ~spgemmd_process() {
    if (running()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  spgemmd_process(const spgemmd_process&) = delete;
  spgemmd_process& operator=(const spgemmd_process&) = delete;

  bool serving() { return port_ != 0 && running(); }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  void signal(int sig) { kill(pid_, sig); }

  // Its exit status once it ended within `within` (128 + the signal that
  // ended it), else -1.
  int wait_exit(std::chrono::milliseconds within = std::chrono::seconds(15)) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (running() && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return running() ? -1 : status_;
  }

  std::string log() const {
    std::ifstream in(dir_ / "log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  bool running() {
    if (exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    exited_ = true;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  bool exited_ = false;
  int status_ = -1;
};

}  // namespace spgemmd::testing
