// One reading of the whole server: every device's budget, cache, jobs and
// memory, the queue, the host spill space. The Status call and the metrics
// scrape both read it; a caller that is not an admin reads its tenant's part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

struct device_status {
  std::string name, description;
  bool is_gpu = false;
  device_stats cache;             // budget, cached, reserved, peak used, uses and hits, panels, bytes moved
  int jobs_running = 0;
  int jobs_queued = 0;
  spgemm::backend_memory memory;  // as the backend reports it
};

struct server_status {
  std::vector<device_status> devices;
  scheduler_stats jobs;
  std::size_t host_bytes = 0, host_budget = 0;
  std::size_t spill_bytes = 0, spill_budget = 0;  // the spill files (none: 0, 0)
  int64_t matrices = 0;
};

server_status status_of(matrix_cache& cache, scheduler& sched);
// What `who` may see of it: everything for an admin; else its tenant's
// matrices and jobs, and of the devices and the host only what they are
// (names, sizes, budgets), none of the server-wide use.
server_status status_of(matrix_cache& cache, scheduler& sched, const caller& who);

}  // namespace spgemmd::core
