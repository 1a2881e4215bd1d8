#include "spgemmd_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

namespace spgemmd::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string spgemmd_binary() {
  const char* env = std::getenv("SPGEMMD");
  return env && *env ? env : SPGEMMD_BINARY;
}

std::string test_backend() {
  const char* env = std::getenv("SPGEMM_TEST_BACKEND");
  return env && *env ? env : "cpu";
}

pid_t spawn(std::vector<std::string> args, const std::string& log, std::size_t address_space) {
  // Everything the child uses is made before the fork: between fork and exec
  // it may only make async-signal-safe calls (another thread may hold
  // malloc's lock).
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a test killed midway leaves no server behind
    if (getppid() != parent) _exit(125);
    if (!log.empty()) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) _exit(126);
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    if (address_space > 0) {
      const rlimit limit{address_space, address_space};
      setrlimit(RLIMIT_AS, &limit);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

spgemmd_process::spgemmd_process(const std::vector<std::string>& flags, const spgemmd_options& options) {
  start(flags, options);
}

spgemmd_process::~spgemmd_process() {
  if (running()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string spgemmd_process::start(const std::vector<std::string>& flags, const spgemmd_options& options) {
  static std::atomic<int> counter{0};
  dir_ = fs::temp_directory_path() / ("spgemmd-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir_);
  const std::string binary = spgemmd_binary();
  if (access(binary.c_str(), X_OK) != 0) {
    return failure_ = "spgemmd not found at " + binary + " (build target spgemmd, or set SPGEMMD)";
  }
  std::vector<std::string> args = {binary, "--listen=127.0.0.1:0", "--port_file=" + (dir_ / "port").string()};
  if (options.metrics) {
    args.push_back("--metrics_listen=127.0.0.1:0");
    args.push_back("--metrics_port_file=" + (dir_ / "metrics_port").string());
  } else {
    args.push_back("--metrics_listen=");
  }
  for (const char* flag : {"--cpu_threads=2", "--grace_seconds=5"}) args.push_back(flag);
  args.push_back("--backend=" + test_backend());
  args.insert(args.end(), flags.begin(), flags.end());
  pid_ = spawn(args, (dir_ / "log").string(), options.address_space_bytes);
  if (pid_ < 0) return failure_ = "fork failed";
  // The port file is written once the server listens; the metrics port's before it.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream p(dir_ / "port");
    int port = 0;
    if (p >> port) {
      std::ifstream m(dir_ / "metrics_port");
      if (options.metrics && !(m >> metrics_port_)) return failure_ = "no metrics port file; its log:\n" + log();
      port_ = port;
      return failure_ = "";
    }
    if (!running()) {
      return failure_ = "spgemmd exited early (status " + std::to_string(status_) + "); its log:\n" + log();
    }
    std::this_thread::sleep_for(20ms);
  }
  stop(SIGKILL);
  return failure_ = "spgemmd did not write its port within 30 s; its log:\n" + log();
}

bool spgemmd_process::serving() { return port_ != 0 && running(); }

std::string spgemmd_process::failure() {
  if (!failure_.empty() || serving()) return failure_;
  return pid_ < 0 ? "spgemmd was not started" : "spgemmd exited (status " + std::to_string(status_) + "); its log:\n" + log();
}

std::string spgemmd_process::log() const {
  std::ifstream in(dir_ / "log");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int64_t spgemmd_process::rss_bytes() const {
  if (exited_ || pid_ < 0) return -1;
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

void spgemmd_process::signal(int sig) {
  if (running()) kill(pid_, sig);
}

int spgemmd_process::wait_exit(std::chrono::milliseconds within) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (running() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(10ms);
  return running() ? -1 : status_;
}

int spgemmd_process::stop(int sig, std::chrono::milliseconds within) {
  signal(sig);
  wait_exit(within);
  if (running()) {  // false where never started: kill(-1, ...) would signal every process
    kill(pid_, SIGKILL);
    wait_exit(within);
  }
  return status_;
}

bool spgemmd_process::running() {
  if (exited_ || pid_ < 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  exited_ = true;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

}  // namespace spgemmd::testing
