// What every reactor of the service reaches: the core (cache, scheduler,
// remembered estimates, shared-memory regions), who calls (auth), the
// metrics, the settings, and the service's own state.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

#include "auth/authenticator.hpp"
#include "core/amg_hierarchies.hpp"
#include "core/estimate_memo.hpp"
#include "core/matrix_cache.hpp"
#include "core/region_registry.hpp"
#include "core/scheduler.hpp"
#include "ops/config.hpp"
#include "ops/service_metrics.hpp"
#include "rpc/call_count.hpp"
#include "rpc/session_reactor.hpp"
#include "rpc/spare_arrays.hpp"

namespace spgemmd {

struct service_state {
  core::matrix_cache& cache;
  core::scheduler& sched;
  service_metrics& metrics;
  const auth::authenticator& auth;
  const config& cfg;
  std::string version;
  core::steady::time_point started = core::steady::now();
  std::atomic<bool> shutting_down{false};  // new calls get UNAVAILABLE
  call_count calls;                         // of the service's calls in flight
  core::estimate_memo estimates{4096};  // of products of stored matrices
  spare_arrays upload_arrays;           // of finished uploads, for the next ones
  core::region_registry regions;        // shared-memory regions of callers on this host
  session_list sessions;                // the open Local sessions, ended at shutdown
  core::amg_hierarchies hierarchies{cache};  // multigrid hierarchies kept

  service_state(core::matrix_cache& c, core::scheduler& s, service_metrics& m, const auth::authenticator& a,
                const config& cf, std::string v)
      : cache(c), sched(s), metrics(m), auth(a), cfg(cf), version(std::move(v)),
        upload_arrays(static_cast<std::size_t>(cf.upload_spare_bytes)),
        regions(static_cast<std::size_t>(cf.max_regions), cf.pinned_region_bytes) {}
};

}  // namespace spgemmd
