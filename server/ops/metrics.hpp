// Prometheus metrics: a small registry rendered in the text exposition format
// (version 0.0.4) and a tiny HTTP/1.1 server answering GET /metrics.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace spgemmd {

// Labels as rendered inside the braces: `phase="queue",device="cpu"`.
std::string labels(std::initializer_list<std::pair<const char*, std::string>> kv);

class metrics_registry {
 public:
  // Declares a metric's type ("counter", "gauge", "histogram") and help text.
  void describe(const std::string& name, const std::string& type, const std::string& help);

  void add(const std::string& name, const std::string& label_set, double delta = 1);
  // Histogram in seconds, with the registry's fixed buckets.
  void observe(const std::string& name, const std::string& label_set, double seconds);
  // Called at every scrape to set gauges: fn(set) where set(name, labels, value).
  using gauge_setter = std::function<void(const std::string&, const std::string&, double)>;
  void set_collector(std::function<void(const gauge_setter&)> fn);

  std::string render();
  // The value of a counter (tests and logs), 0 when never touched.
  double counter_value(const std::string& name, const std::string& label_set);

 private:
  struct family {
    std::string type, help;
    std::map<std::string, double> values;  // counters and gauges, by label set
    struct hist {
      std::vector<double> counts;  // per bucket, cumulative at render
      double sum = 0;
      double count = 0;
    };
    std::map<std::string, hist> hists;
  };
  std::mutex mutex_;
  std::map<std::string, family> families_;
  std::function<void(const gauge_setter&)> collector_;
};

const std::vector<double>& histogram_buckets();

// Serves GET /metrics (and /healthz) from a registry on its own thread.
class metrics_http_server {
 public:
  explicit metrics_http_server(metrics_registry& registry) : registry_(registry) {}
  ~metrics_http_server() { stop(); }
  // Binds "host:port" (port 0 picks one); returns the bound port or -1, with `error` set.
  int start(const std::string& address, std::string* error);
  void stop();

 private:
  void serve();
  void handle(int fd);

  metrics_registry& registry_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace spgemmd
