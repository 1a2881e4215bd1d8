#include "core/server_status.hpp"

namespace spgemmd::core {

server_status status_of(matrix_cache& cache, scheduler& sched) {
  const cache_stats cs = cache.stats();
  server_status s;
  s.jobs = sched.stats();
  s.host_bytes = cs.host_bytes;
  s.host_budget = cs.host_budget;
  if (const auto& spill = cache.spill()) {
    s.spill_bytes = spill->used();
    s.spill_budget = spill->budget();
  }
  s.matrices = cs.matrices;
  for (std::size_t i = 0; i < cs.devices.size(); ++i) {
    const auto& b = cache.backends()[i];
    device_status d;
    d.name = cs.devices[i].name;
    d.description = b->description();
    d.is_gpu = b->is_gpu();
    d.cache = cs.devices[i];
    d.jobs_running = i < s.jobs.running_per_device.size() ? s.jobs.running_per_device[i] : 0;
    d.jobs_queued = i < s.jobs.queued_per_device.size() ? s.jobs.queued_per_device[i] : 0;
    d.memory = b->memory();
    s.devices.push_back(std::move(d));
  }
  return s;
}

server_status status_of(matrix_cache& cache, scheduler& sched, const caller& who) {
  server_status s = status_of(cache, sched);
  if (who.admin) return s;
  const tenant_stats held = cache.stats_of(who.tenant);
  s.jobs = sched.stats_of(who.tenant);
  s.host_bytes = held.host;
  s.spill_bytes = 0;  // the server's, not the tenant's
  s.matrices = held.matrices;
  for (std::size_t i = 0; i < s.devices.size(); ++i) {
    device_status& d = s.devices[i];
    // Its own bytes; the device's use, panels and bytes moved are the whole server's, not shown.
    d.cache = {d.cache.name, d.cache.budget, held.device[i], 0, 0, 0, 0};
    d.jobs_running = s.jobs.running_per_device[i];
    d.jobs_queued = s.jobs.queued_per_device[i];
    d.memory = {d.memory.total_bytes, 0, 0, 0};
  }
  return s;
}

}  // namespace spgemmd::core
