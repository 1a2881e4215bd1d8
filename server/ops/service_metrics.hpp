// The service's metrics, each declared here once and recorded through these
// calls; the gauges are read from the server's status at every scrape.
#pragma once

#include <cstdint>
#include <string>

#include "core/job_run.hpp"
#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"
#include "ops/metrics.hpp"

namespace spgemmd {

class service_metrics {
 public:
  // Declares the metrics in `registry`; its gauges read `cache` and `sched`.
  service_metrics(metrics_registry& registry, core::matrix_cache& cache, core::scheduler& sched);

  // A call of `kind` ("upload", "multiply", ...) ended with `outcome` (a status code's name).
  void call_ended(const std::string& kind, const std::string& outcome);
  void phase(const std::string& kind, const std::string& phase, double seconds);
  // A job's timeline: its own phases and the call's around them.
  void job_phases(const std::string& kind, const core::job_times& job, const core::call_phases& call);
  void bytes_in(int64_t bytes);
  void bytes_out(int64_t bytes);
  void flops(const std::string& kind, const std::string& device, double flops);

 private:
  metrics_registry& registry_;
};

}  // namespace spgemmd
