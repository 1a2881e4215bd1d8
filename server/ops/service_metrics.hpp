// The service's metrics, each declared here once (prometheus-cpp families)
// and recorded through these calls; the gauges are read from the server's
// status at every scrape.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "core/job_run.hpp"
#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"

namespace spgemmd {

class service_metrics {
 public:
  // The gauges read `cache` and `sched`.
  service_metrics(core::matrix_cache& cache, core::scheduler& sched);

  // What the metrics endpoint serves.
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables() const;

  // A call of `kind` ("upload", "multiply", ...) ended with `outcome` (a status code's name).
  void call_ended(const std::string& kind, const std::string& outcome);
  void phase(const std::string& kind, const std::string& phase, double seconds);
  // A job's timeline: its own phases and the call's around them.
  void job_phases(const std::string& kind, const core::job_times& job, const core::call_phases& call);
  void bytes_in(int64_t bytes);
  void bytes_out(int64_t bytes);
  void flops(const std::string& kind, const std::string& device, double flops);

 private:
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::shared_ptr<prometheus::Collectable> gauges_;
  prometheus::Family<prometheus::Counter>& jobs_;
  prometheus::Family<prometheus::Histogram>& phases_;
  prometheus::Counter& bytes_in_;
  prometheus::Counter& bytes_out_;
  prometheus::Family<prometheus::Counter>& flops_;
};

}  // namespace spgemmd
