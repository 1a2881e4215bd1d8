// Who makes a call: the tenant that owns what the call creates, whether it
// sees every tenant's (an admin), and the limits on what its tenant may hold.
// A front end resolves it (gRPC: from the call's bearer token, server/auth)
// and passes it down; the core scopes every matrix, job and reading of the
// server's state by it. Anything else a tenant owns (a shared-memory region)
// is scoped the same way: owned by `tenant`, visible where sees(owner).
#pragma once

#include <cstddef>
#include <string>

namespace spgemmd::core {

// Limits on what one tenant holds at once; 0: no limit.
struct quotas {
  std::size_t device_bytes = 0;  // its matrices cached on the devices
  std::size_t host_bytes = 0;    // its matrices in host memory (spilled there, or stored there)
  int running_jobs = 0;          // its jobs running (more wait in the queue)
  int queued_jobs = 0;           // its jobs waiting (more are refused: over_quota)
};

struct caller {
  std::string tenant;  // owns what the call creates
  bool admin = false;  // sees and uses every tenant's matrices, and the whole server's state
  quotas limits;

  // Whether this caller may see, use or delete what `owner` owns. Another
  // tenant's matrix is, to it, a matrix that does not exist.
  bool sees(const std::string& owner) const { return admin || owner == tenant; }

  // The one caller of a server without tokens: tenant "", an admin, no limits.
  static caller anyone() { return {"", true, {}}; }
};

}  // namespace spgemmd::core
