// A spgemmd child process on a free loopback port, for the programs that
// measure or load a server they start themselves (spgemm-service-bench,
// spgemm-load). It goes when its parent goes, however that ends.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace spgemm::bench {

class spawned_server {
 public:
  // Starts `binary` with --backend=`backend`, `args` after the listen flags,
  // its log in `log` (empty: a scratch file); with `metrics`, Prometheus
  // metrics on a free loopback port too. Throws std::runtime_error (with
  // the log's last lines) where it does not serve within 120 s.
  spawned_server(const std::string& binary, const std::string& backend, const std::vector<std::string>& args,
                 const std::string& log, bool metrics = false);
  spawned_server(const spawned_server&) = delete;
  spawned_server& operator=(const spawned_server&) = delete;
  ~spawned_server();

  const std::string& address() const { return address_; }
  // "127.0.0.1:PORT" of its metrics, or "" without.
  const std::string& metrics_address() const { return metrics_address_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then SIGKILL after 30 s.
  void stop();

 private:
  std::string tail_of_log() const;

  std::string dir_, port_file_, metrics_port_file_, log_, address_, metrics_address_;
  pid_t pid_ = -1;
};

}  // namespace spgemm::bench
