#include "test_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace spgemm::client_test {
namespace fs = std::filesystem;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct server_process {
  spgemmd_process process;
  std::string address;
  std::string failure;

  void stop() { process.stop(SIGTERM); }

  void start() {
    failure = process.start({});
    address = process.address();
  }
};

server_process& server() {
  static server_process s;
  return s;
}

struct scratch {
  std::string dir;
  scratch() {
    std::string tmpl = (fs::temp_directory_path() / "spgemm-client-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
  }
  ~scratch() {
    std::error_code ec;
    if (!std::getenv("SPGEMM_KEEP_TEST_FILES")) fs::remove_all(dir, ec);
  }
};

}  // namespace

const std::string& scratch_dir() {
  static scratch s;
  return s.dir;
}

std::string scratch_path(const std::string& name) { return scratch_dir() + "/" + name; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

const std::string& test_server::address() {
  auto& s = server();
  if (s.address.empty() && s.failure.empty()) {
    scratch_dir();  // created before the server so it is removed after it
    s.start();
  }
  if (!s.failure.empty()) ADD_FAILURE() << s.failure;
  return s.address;
}

void test_server::stop() { server().stop(); }

int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

cli_process::cli_process(const std::vector<std::string>& args, const std::string& server) {
  static int counter = 0;
  out_ = scratch_path("cli." + std::to_string(++counter) + ".out");
  err_ = scratch_path("cli." + std::to_string(counter) + ".err");
  const char* env = std::getenv("SPGEMM_CLI");
  const std::string binary = env && *env ? env : SPGEMM_CLI_PATH;
  std::vector<std::string> argv_text = {binary};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  // Everything the child needs is made here: between fork and exec it may
  // only make async-signal-safe calls (other threads may hold malloc's lock).
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    if (var.rfind("SPGEMM_TOKEN=", 0) != 0 && var.rfind("SPGEMM_SERVER=", 0) != 0) env_text.push_back(var);
  }
  if (!server.empty()) env_text.push_back("SPGEMM_SERVER=" + server);
  std::vector<char*> argv, envp;
  for (auto& a : argv_text) argv.push_back(a.data());
  for (auto& e : env_text) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::execve(binary.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
}

cli_process::~cli_process() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool cli_process::running() {
  if (pid_ > 0 && ::waitpid(pid_, &status_, WNOHANG) == pid_) pid_ = -1;
  return pid_ > 0;
}

void cli_process::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

run_result cli_process::wait(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (running()) {
    ADD_FAILURE() << "spgemm still running after " << timeout.count() << " s: killed";
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    pid_ = -1;
  }
  run_result r;
  r.exit_code = WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  r.out = read_all(out_);
  r.err = read_all(err_);
  return r;
}

run_result run_cli(const std::vector<std::string>& args, const std::string& server_address) {
  return cli_process(args, server_address).wait();
}

std::string matrices_dir() {
  const char* env = std::getenv("SPGEMM_MATRICES");
  const std::string dir = env && *env ? env : SPGEMM_DEFAULT_MATRICES;
  std::error_code ec;
  return fs::is_directory(dir, ec) ? dir : "";
}

bool matrices_required() {
  const char* env = std::getenv("SPGEMM_REQUIRE_MATRICES");
  return env && std::string(env) == "1";
}

}  // namespace spgemm::client_test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  spgemm::client_test::test_server::stop();
  return rc;
}
