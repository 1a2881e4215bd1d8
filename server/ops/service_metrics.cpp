#include "ops/service_metrics.hpp"

#include <utility>

#include <prometheus/metric_family.h>

#include "core/server_status.hpp"
#include "ops/metrics.hpp"

namespace spgemmd {

namespace {

namespace pm = prometheus;

// The gauges, and the bytes moved per device (counters): read from the
// server's status at every scrape.
class status_gauges final : public pm::Collectable {
 public:
  status_gauges(core::matrix_cache& cache, core::scheduler& sched) : cache_(cache), sched_(sched) {}

  std::vector<pm::MetricFamily> Collect() const override {
    const core::server_status s = core::status_of(cache_, sched_);
    std::vector<pm::MetricFamily> out;
    auto family = [&](const char* name, const char* help) -> pm::MetricFamily& {
      out.push_back({name, help, pm::MetricType::Gauge, {}});
      return out.back();
    };
    auto sample = [](pm::MetricFamily& f, double value, const std::string& device = "") {
      pm::ClientMetric m;
      if (!device.empty()) m.label.push_back({"device", device});
      m.gauge.value = value;
      f.metric.push_back(std::move(m));
    };
    sample(family("spgemmd_queue_depth", "Jobs waiting for admission."), s.jobs.queue_depth);
    sample(family("spgemmd_matrices", "Matrices stored."), static_cast<double>(s.matrices));
    sample(family("spgemmd_cache_host_bytes", "Bytes of matrices spilled to host memory."),
           static_cast<double>(s.host_bytes));
    const std::pair<const char*, const char*> per_device[] = {
        {"spgemmd_jobs_running", "Jobs running, per device."},
        {"spgemmd_jobs_queued", "Jobs waiting, per device they were placed on."},
        {"spgemmd_panels_in_flight",
         "Row panels of products too large for one device, computing there or waiting to leave it, per device."},
        {"spgemmd_cache_bytes", "Bytes of matrices resident per device."},
        {"spgemmd_cache_hit_ratio", "Uses of a matrix found resident on the device / all uses, per device."},
        {"spgemmd_device_budget_bytes", "The server's byte budget per device (cache plus running jobs)."},
        {"spgemmd_device_reserved_bytes", "Bytes reserved by running jobs and results in flight, per device."},
        {"spgemmd_device_used_peak_bytes",
         "The most cache plus reserved bytes at once, per device (never above the budget)."},
        {"spgemmd_device_memory_total_bytes", "Device memory in all, as the backend reports it."},
        {"spgemmd_device_memory_free_bytes", "Device memory free, as the driver (or OS) reports it."},
        {"spgemmd_device_memory_in_use_bytes", "Bytes the backend has allocated now."},
        {"spgemmd_device_memory_peak_bytes", "The most the backend has allocated at once."},
        {"spgemmd_device_memory_cached_bytes",
         "Freed device memory the backend's pool holds for reuse (down to --device_keep_bytes once quiet)."}};
    const std::size_t first = out.size();
    for (const auto& [name, help] : per_device) family(name, help);
    const std::size_t moved = out.size();
    out.push_back({"spgemmd_device_bytes_moved_total",
                   "Bytes copied between host and device, per device and direction (to_device, to_host, from_peer).",
                   pm::MetricType::Counter,
                   {}});
    for (const core::device_status& d : s.devices) {
      const core::device_stats& c = d.cache;
      const double values[] = {static_cast<double>(d.jobs_running),
                               static_cast<double>(d.jobs_queued),
                               static_cast<double>(c.panels_in_flight),
                               static_cast<double>(c.cached),
                               c.uses > 0 ? static_cast<double>(c.hits) / static_cast<double>(c.uses) : 0.0,
                               static_cast<double>(c.budget),
                               static_cast<double>(c.reserved),
                               static_cast<double>(c.peak_used),
                               static_cast<double>(d.memory.total_bytes),
                               static_cast<double>(d.memory.free_bytes),
                               static_cast<double>(d.memory.in_use_bytes),
                               static_cast<double>(d.memory.peak_bytes),
                               static_cast<double>(d.memory.cached_bytes)};
      for (std::size_t i = 0; i < std::size(values); ++i) sample(out[first + i], values[i], d.name);
      for (const auto& [direction, bytes] : {std::pair{"to_device", c.bytes_to_device},
                                             {"to_host", c.bytes_to_host}, {"from_peer", c.bytes_from_peer}}) {
        pm::ClientMetric m;
        m.label = {{"device", d.name}, {"direction", direction}};
        m.counter.value = static_cast<double>(bytes);
        out[moved].metric.push_back(std::move(m));
      }
    }
    return out;
  }

 private:
  core::matrix_cache& cache_;
  core::scheduler& sched_;
};

}  // namespace

service_metrics::service_metrics(core::matrix_cache& cache, core::scheduler& sched)
    : gauges_(std::make_shared<status_gauges>(cache, sched)),
      jobs_(pm::BuildCounter()
                .Name("spgemmd_jobs_total")
                .Help("Calls by kind (upload, upload_from_region, upload_from_device, multiply, galerkin, transpose, download; "
                      "the graph calls mxm, ewise_add, "
                      "ewise_mult, apply, select, top_k, reduce, scale, extract_rows) and outcome (status code).")
                .Register(*registry_)),
      phases_(pm::BuildHistogram()
                  .Name("spgemmd_phase_seconds")
                  .Help("Latency per phase: queue (waiting for admission), compute (the engine), stream (sending "
                        "the result).")
                  .Register(*registry_)),
      bytes_in_(pm::BuildCounter()
                    .Name("spgemmd_bytes_in_total")
                    .Help("Bytes received in uploads.")
                    .Register(*registry_)
                    .Add({})),
      bytes_out_(pm::BuildCounter()
                     .Name("spgemmd_bytes_out_total")
                     .Help("Bytes sent in results and downloads.")
                     .Register(*registry_)
                     .Add({})),
      flops_(pm::BuildCounter()
                 .Name("spgemmd_flops_total")
                 .Help("Floating-point operations (2 x scalar products) of finished products, by kind and device.")
                 .Register(*registry_)) {
  // Series that exist from the start, at zero: dashboards and rate() see
  // them before the first call (prometheus-cpp leaves a family without
  // series out of the page).
  for (const char* kind : {"upload", "download"}) {
    jobs_.Add({{"kind", kind}, {"outcome", "ok"}});
    phases_.Add({{"kind", kind}, {"phase", "stream"}}, histogram_buckets());
  }
  for (const char* kind : {"multiply", "galerkin", "transpose"}) {
    jobs_.Add({{"kind", kind}, {"outcome", "ok"}});
    for (const auto& b : cache.backends()) flops_.Add({{"kind", kind}, {"device", b->name()}});
  }
  phases_.Add({{"kind", "multiply"}, {"phase", "compute"}}, histogram_buckets());
}

std::vector<std::weak_ptr<pm::Collectable>> service_metrics::collectables() const { return {registry_, gauges_}; }

void service_metrics::call_ended(const std::string& kind, const std::string& outcome) {
  jobs_.Add({{"kind", kind}, {"outcome", outcome}}).Increment();
}

void service_metrics::phase(const std::string& kind, const std::string& phase, double seconds) {
  phases_.Add({{"kind", kind}, {"phase", phase}}, histogram_buckets()).Observe(seconds);
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

void service_metrics::bytes_in(int64_t bytes) { bytes_in_.Increment(static_cast<double>(bytes)); }

void service_metrics::bytes_out(int64_t bytes) { bytes_out_.Increment(static_cast<double>(bytes)); }

void service_metrics::flops(const std::string& kind, const std::string& device, double flops) {
  flops_.Add({{"kind", kind}, {"device", device}}).Increment(flops);
}

}  // namespace spgemmd
