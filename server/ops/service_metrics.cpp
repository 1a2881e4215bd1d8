#include "ops/service_metrics.hpp"

#include <utility>

#include "core/server_status.hpp"

namespace spgemmd {

service_metrics::service_metrics(metrics_registry& registry, core::matrix_cache& cache, core::scheduler& sched)
    : registry_(registry) {
  auto& m = registry_;
  m.describe("spgemmd_jobs_total", "counter", "Calls by kind (upload, multiply, galerkin, transpose, download) and outcome (status code).");
  m.describe("spgemmd_phase_seconds", "histogram", "Latency per phase: queue (waiting for admission), compute (the engine), stream (sending the result).");
  m.describe("spgemmd_bytes_in_total", "counter", "Bytes received in uploads.");
  m.describe("spgemmd_bytes_out_total", "counter", "Bytes sent in results and downloads.");
  m.describe("spgemmd_flops_total", "counter",
             "Floating-point operations (2 x scalar products) of finished products, by kind and device.");
  m.describe("spgemmd_queue_depth", "gauge", "Jobs waiting for admission.");
  m.describe("spgemmd_jobs_running", "gauge", "Jobs running, per device.");
  m.describe("spgemmd_jobs_queued", "gauge", "Jobs waiting, per device they were placed on.");
  m.describe("spgemmd_panels_in_flight", "gauge",
             "Row panels of products too large for one device, computing there or waiting to leave it, per device.");
  m.describe("spgemmd_device_bytes_moved_total", "counter",
             "Bytes copied between host and device, per device and direction (to_device, to_host, from_peer).");
  m.describe("spgemmd_matrices", "gauge", "Matrices stored.");
  m.describe("spgemmd_cache_bytes", "gauge", "Bytes of matrices resident per device.");
  m.describe("spgemmd_cache_host_bytes", "gauge", "Bytes of matrices spilled to host memory.");
  m.describe("spgemmd_cache_hit_ratio", "gauge", "Uses of a matrix found resident on the device / all uses, per device.");
  m.describe("spgemmd_device_budget_bytes", "gauge", "The server's byte budget per device (cache plus running jobs).");
  m.describe("spgemmd_device_reserved_bytes", "gauge", "Bytes reserved by running jobs and results in flight, per device.");
  m.describe("spgemmd_device_used_peak_bytes", "gauge", "The most cache plus reserved bytes at once, per device (never above the budget).");
  m.describe("spgemmd_device_memory_total_bytes", "gauge", "Device memory in all, as the backend reports it.");
  m.describe("spgemmd_device_memory_free_bytes", "gauge", "Device memory free, as the driver (or OS) reports it.");
  m.describe("spgemmd_device_memory_in_use_bytes", "gauge", "Bytes the backend has allocated now.");
  m.describe("spgemmd_device_memory_peak_bytes", "gauge", "The most the backend has allocated at once.");
  m.set_collector([&cache, &sched](const metrics_registry::gauge_setter& set) {
    const core::server_status s = core::status_of(cache, sched);
    set("spgemmd_queue_depth", "", s.jobs.queue_depth);
    set("spgemmd_matrices", "", static_cast<double>(s.matrices));
    set("spgemmd_cache_host_bytes", "", static_cast<double>(s.host_bytes));
    for (const core::device_status& d : s.devices) {
      const std::string l = labels({{"device", d.name}});
      const core::device_stats& c = d.cache;
      set("spgemmd_jobs_running", l, d.jobs_running);
      set("spgemmd_jobs_queued", l, d.jobs_queued);
      set("spgemmd_panels_in_flight", l, c.panels_in_flight);
      for (const auto& [direction, bytes] : {std::pair{"to_device", c.bytes_to_device},
                                             {"to_host", c.bytes_to_host}, {"from_peer", c.bytes_from_peer}}) {
        set("spgemmd_device_bytes_moved_total", labels({{"device", d.name}, {"direction", direction}}),
            static_cast<double>(bytes));
      }
      set("spgemmd_cache_bytes", l, static_cast<double>(c.cached));
      set("spgemmd_cache_hit_ratio", l, c.uses > 0 ? static_cast<double>(c.hits) / static_cast<double>(c.uses) : 0.0);
      set("spgemmd_device_budget_bytes", l, static_cast<double>(c.budget));
      set("spgemmd_device_reserved_bytes", l, static_cast<double>(c.reserved));
      set("spgemmd_device_used_peak_bytes", l, static_cast<double>(c.peak_used));
      set("spgemmd_device_memory_total_bytes", l, static_cast<double>(d.memory.total_bytes));
      set("spgemmd_device_memory_free_bytes", l, static_cast<double>(d.memory.free_bytes));
      set("spgemmd_device_memory_in_use_bytes", l, static_cast<double>(d.memory.in_use_bytes));
      set("spgemmd_device_memory_peak_bytes", l, static_cast<double>(d.memory.peak_bytes));
    }
  });
}

void service_metrics::call_ended(const std::string& kind, const std::string& outcome) {
  registry_.add("spgemmd_jobs_total", labels({{"kind", kind}, {"outcome", outcome}}));
}

void service_metrics::phase(const std::string& kind, const std::string& phase, double seconds) {
  registry_.observe("spgemmd_phase_seconds", labels({{"kind", kind}, {"phase", phase}}), seconds);
}

void service_metrics::job_phases(const std::string& kind, const core::job_times& job, const core::call_phases& call) {
  for (const auto& [name, seconds] :
       {std::pair{"request", call.request}, {"queue", job.queue}, {"admit", job.admit}, {"estimate", job.estimate},
        {"handoff", job.handoff}, {"compute", job.compute}, {"engine", job.engine}, {"release", call.release}}) {
    phase(kind, name, seconds);
  }
  if (call.reply > 0) {
    phase(kind, "keep", call.keep);
    phase(kind, "reply", call.reply);
  }
}

void service_metrics::bytes_in(int64_t bytes) {
  registry_.add("spgemmd_bytes_in_total", "", static_cast<double>(bytes));
}

void service_metrics::bytes_out(int64_t bytes) {
  registry_.add("spgemmd_bytes_out_total", "", static_cast<double>(bytes));
}

void service_metrics::flops(const std::string& kind, const std::string& device, double flops) {
  registry_.add("spgemmd_flops_total", labels({{"kind", kind}, {"device", device}}), flops);
}

}  // namespace spgemmd
