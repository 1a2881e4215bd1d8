// The metrics endpoint: prometheus-cpp's exposer serving GET /metrics (the
// Prometheus text format 0.0.4) from collectables, and GET /healthz ("ok":
// the process is alive). It runs on CivetWeb's pool of threads, and a request
// whose headers take longer than a few seconds is dropped, so a slow or
// stalled client holds one thread for a little while and never the others.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/histogram.h>

namespace spgemmd {

// The buckets of every latency histogram (seconds).
const prometheus::Histogram::BucketBoundaries& histogram_buckets();

class metrics_endpoint {
 public:
  metrics_endpoint() = default;
  ~metrics_endpoint();
  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

  // Serves `collectables` at /metrics on "host:port" (port 0 picks one;
  // an empty host: every address). Returns the bound port, or -1 with `error` set.
  int start(const std::string& address, const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables,
            std::string* error);
  void stop();

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace spgemmd
