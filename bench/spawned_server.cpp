#include "spawned_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace spgemm::bench {

namespace {

using clock_type = std::chrono::steady_clock;

// The port in `path`, or 0 while it is not there yet.
int read_port(const std::string& path) {
  std::ifstream in(path);
  int port = 0;
  return in >> port && port > 0 ? port : 0;
}

}  // namespace

spawned_server::spawned_server(const std::string& binary, const std::string& backend,
                               const std::vector<std::string>& args, const std::string& log, bool metrics) {
  char dir_template[] = "/tmp/spgemm-spawned.XXXXXX";
  if (!mkdtemp(dir_template)) throw std::runtime_error("mkdtemp failed");
  dir_ = dir_template;
  port_file_ = dir_ + "/port";
  metrics_port_file_ = dir_ + "/metrics_port";
  log_ = log.empty() ? dir_ + "/spgemmd.log" : log;

  std::vector<std::string> all = {binary, "--listen=127.0.0.1:0", "--port_file=" + port_file_,
                                  "--backend=" + backend, "--grace_seconds=2"};
  if (metrics) {
    all.push_back("--metrics_listen=127.0.0.1:0");
    all.push_back("--metrics_port_file=" + metrics_port_file_);
  } else {
    all.push_back("--metrics_listen=");
  }
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execv(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s\n", argv[0]);
    _exit(127);
  }

  // Wait for the port files; the server writes them once it serves.
  const auto deadline = clock_type::now() + std::chrono::seconds(120);
  for (;;) {
    const int port = read_port(port_file_);
    const int metrics_port = metrics ? read_port(metrics_port_file_) : 0;
    if (port > 0 && (!metrics || metrics_port > 0)) {
      address_ = "127.0.0.1:" + std::to_string(port);
      if (metrics) metrics_address_ = "127.0.0.1:" + std::to_string(metrics_port);
      break;
    }
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("spgemmd exited before serving; its log:\n" + tail_of_log());
    }
    if (clock_type::now() > deadline) {
      stop();
      throw std::runtime_error("spgemmd did not serve within 120 s; its log:\n" + tail_of_log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

spawned_server::~spawned_server() {
  stop();
  std::remove(port_file_.c_str());
  std::remove(metrics_port_file_.c_str());
  if (log_.rfind(dir_, 0) == 0) std::remove(log_.c_str());
  rmdir(dir_.c_str());
}

void spawned_server::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto deadline = clock_type::now() + std::chrono::seconds(30);
  int st = 0;
  while (waitpid(pid_, &st, WNOHANG) == 0) {
    if (clock_type::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &st, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

std::string spawned_server::tail_of_log() const {
  std::ifstream in(log_);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > 20 ? lines.size() - 20 : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

}  // namespace spgemm::bench
